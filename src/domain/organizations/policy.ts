import { Types } from 'mongoose';
import { z } from 'zod';
import { DEFAULT_POLICY, type CommandPolicy } from '../planner/policy';
import { RISKS, type Risk } from '../planner/types';
import { OrganizationModel } from './model';

/**
 * The command policy as an organization stores it: the planner's policy, and how far conversations
 * started by a service account (an AI agent, a script) are held for a person. An agent's `destructive`
 * steps always wait for a person; its `change` steps too unless the organization relaxes it.
 */
export interface OrganizationPolicy extends CommandPolicy {
  agents_require_approval_for_change: boolean;
}

export const DEFAULT_ORGANIZATION_POLICY: OrganizationPolicy = { ...DEFAULT_POLICY, agents_require_approval_for_change: true };

export const policySchema = z.strictObject({
  allow_destructive: z.boolean(),
  require_approval_for: z.array(z.enum(RISKS)).max(3).transform((risks) => [...new Set(risks)]),
  agents_require_approval_for_change: z.boolean({ message: 'agents_require_approval_for_change must be true or false' }).default(true),
});

export const policyViewSchema = z
  .object({
    allow_destructive: z.boolean().describe('Whether destructive steps may run at all'),
    require_approval_for: z.array(z.enum(RISKS)).describe('Risks whose steps wait for a person’s approval'),
    agents_require_approval_for_change: z
      .boolean()
      .describe('Whether `change` steps of conversations started by a service account (an AI agent) wait for a person; their `destructive` steps always do'),
  }) satisfies z.ZodType<OrganizationPolicy>;

/** The organization's command policy for conversations; the default until an administrator sets one. */
export async function organizationPolicy(organizationId: string | Types.ObjectId): Promise<OrganizationPolicy> {
  const organization = await OrganizationModel.findById(organizationId, { policy: 1 }).lean();
  const stored = organization?.policy;
  return stored
    ? { allow_destructive: stored.allow_destructive, require_approval_for: stored.require_approval_for, agents_require_approval_for_change: stored.agents_require_approval_for_change ?? true }
    : DEFAULT_ORGANIZATION_POLICY;
}

/** `forced`: who forced a change to a policy a Git source manages (src/api/ownership/guard.ts), set in the same write. */
export async function setOrganizationPolicy(organizationId: string, policy: OrganizationPolicy, forced: Record<string, Date | string> = {}): Promise<OrganizationPolicy> {
  await OrganizationModel.updateOne({ _id: organizationId }, { $set: { policy, ...forced } });
  return organizationPolicy(organizationId);
}

/** The Git source that manages the organization's command policy (null: none). */
export async function policyManagedBy(organizationId: string) {
  return (await OrganizationModel.findById(organizationId, { policy_managed_by: 1 }).lean())?.policy_managed_by ?? null;
}

/**
 * The policy a conversation's steps are judged by: the organization's, and for one an agent started
 * (see `agent` on the conversation) its destructive steps — and its change steps unless the organization
 * relaxed that — wait for a person, whatever `require_approval_for` says.
 */
export async function conversationPolicy(conversation: { organization_id: Types.ObjectId | string; agent?: boolean | null }): Promise<CommandPolicy> {
  const policy = await organizationPolicy(conversation.organization_id);
  if (!conversation.agent) return policy;
  return { ...policy, require_approval_for: [...new Set([...policy.require_approval_for, ...agentHeldRisks(policy)])] };
}

/** The risks of what an agent starts that wait for a person: `destructive` always, `change` unless the organization relaxed it. */
export const agentHeldRisks = (policy: OrganizationPolicy): Risk[] => (policy.agents_require_approval_for_change ? ['change', 'destructive'] : ['destructive']);
