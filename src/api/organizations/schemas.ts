import { policySchema, policyViewSchema } from '../../domain/organizations/policy';
import { forceField } from '../ownership/guard';
import { managedByViewSchema } from '../ownership/views';

/** A PUT of the policy: the policy, and `force` when a Git source manages it. */
export const policyChangeSchema = policySchema.extend({ force: forceField });

export const policyDocumentSchema = policyViewSchema.extend({ managed_by: managedByViewSchema }).meta({ id: 'CommandPolicy' });
