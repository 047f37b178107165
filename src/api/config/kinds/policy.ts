import { Types } from 'mongoose';
import { z } from 'zod';
import { OrganizationModel } from '../../../domain/organizations/model';
import { DEFAULT_ORGANIZATION_POLICY, policySchema, type OrganizationPolicy } from '../../../domain/organizations/policy';
import { checked, managedByOf, schemaProblems, type NamedKindAdapter } from './references-b';

/** The organization has one command policy: its document is named this. */
export const POLICY_NAME = 'default';

const policySpec = (policy: OrganizationPolicy): Record<string, unknown> => ({
  allow_destructive: policy.allow_destructive,
  require_approval_for: [...policy.require_approval_for],
  agents_require_approval_for_change: policy.agents_require_approval_for_change,
});

/**
 * The command policy (PUT /organization/policy), a singleton: one object `default`, always there (the
 * default policy until one is set), its id the organization's. Removing it puts the default back.
 */
export const policyKind: NamedKindAdapter = {
  kind: 'Policy',
  fileSchema: policySchema,
  nameSchema: z.literal(POLICY_NAME, { message: `the organization has one policy: name it "${POLICY_NAME}"` }),

  async current(organizationId) {
    const organization = await OrganizationModel.findById(organizationId, { policy: 1, policy_managed_by: 1 }).lean();
    const stored = organization?.policy;
    const policy = stored
      ? { allow_destructive: stored.allow_destructive, require_approval_for: stored.require_approval_for as OrganizationPolicy['require_approval_for'], agents_require_approval_for_change: stored.agents_require_approval_for_change ?? true }
      : DEFAULT_ORGANIZATION_POLICY;
    return [{ id: organizationId, name: POLICY_NAME, spec: policySpec(policy), managed_by: managedByOf(organization?.policy_managed_by) }];
  },

  async check(spec, context) {
    // current() always has `default`: a document of another name has none.
    if (context.current === null) return checked([{ path: [], message: `the organization has one policy: name it "${POLICY_NAME}"` }], () => ({}));
    const parsed = policySchema.safeParse(spec);
    return parsed.success ? checked([], () => policySpec(parsed.data)) : checked(schemaProblems(parsed.error), () => ({}));
  },

  async write(context, object) {
    const policy = policySchema.parse(object.spec);
    await OrganizationModel.updateOne({ _id: new Types.ObjectId(context.organizationId) }, { $set: { policy, policy_managed_by: object.managed_by } }, { session: context.session });
  },

  async remove(context) {
    await OrganizationModel.updateOne({ _id: new Types.ObjectId(context.organizationId) }, { $set: { policy: null, policy_managed_by: null } }, { session: context.session });
  },

  pruneBlocker: async () => null,
};
