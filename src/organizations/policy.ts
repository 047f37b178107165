import { Types } from 'mongoose';
import { z } from 'zod';
import { DEFAULT_POLICY, type CommandPolicy } from '../planner/policy';
import { OrganizationModel } from './model';

export const policySchema = z.strictObject({
  allow_destructive: z.boolean(),
  require_approval_for: z.array(z.enum(['read', 'change', 'destructive'])).max(3).transform((risks) => [...new Set(risks)]),
});

/** The organization's command policy for conversations; the default until an administrator sets one. */
export async function organizationPolicy(organizationId: string | Types.ObjectId): Promise<CommandPolicy> {
  const organization = await OrganizationModel.findById(organizationId, { policy: 1 }).lean();
  return organization?.policy ? { allow_destructive: organization.policy.allow_destructive, require_approval_for: organization.policy.require_approval_for } : DEFAULT_POLICY;
}

export async function setOrganizationPolicy(organizationId: string, policy: CommandPolicy): Promise<CommandPolicy> {
  await OrganizationModel.updateOne({ _id: organizationId }, { $set: { policy } });
  return organizationPolicy(organizationId);
}
