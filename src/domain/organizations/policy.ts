import { Types } from 'mongoose';
import { z } from 'zod';
import { DEFAULT_POLICY, type CommandPolicy } from '../planner/policy';
import { RISKS } from '../planner/types';
import { OrganizationModel } from './model';

export const policySchema = z.strictObject({
  allow_destructive: z.boolean(),
  require_approval_for: z.array(z.enum(RISKS)).max(3).transform((risks) => [...new Set(risks)]),
});

export const policyViewSchema = z
  .object({
    allow_destructive: z.boolean().describe('Whether destructive steps may run at all'),
    require_approval_for: z.array(z.enum(RISKS)).describe('Risks whose steps wait for a person’s approval'),
  })
  .meta({ id: 'CommandPolicy' }) satisfies z.ZodType<CommandPolicy>;

/** The organization's command policy for conversations; the default until an administrator sets one. */
export async function organizationPolicy(organizationId: string | Types.ObjectId): Promise<CommandPolicy> {
  const organization = await OrganizationModel.findById(organizationId, { policy: 1 }).lean();
  return organization?.policy ? { allow_destructive: organization.policy.allow_destructive, require_approval_for: organization.policy.require_approval_for } : DEFAULT_POLICY;
}

export async function setOrganizationPolicy(organizationId: string, policy: CommandPolicy): Promise<CommandPolicy> {
  await OrganizationModel.updateOne({ _id: organizationId }, { $set: { policy } });
  return organizationPolicy(organizationId);
}
