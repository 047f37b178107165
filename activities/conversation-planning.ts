import { Context } from '@temporalio/activity';
import { posix } from 'node:path';
import { Types } from 'mongoose';
import type { Conversation, ConversationStep } from '../src/domain/conversations/model';
import { MigrationPlanModel } from '../src/domain/migration-plans/model';
import { judgeStep, type CommandPolicy } from '../src/domain/planner/policy';
import { transferCommand } from '../src/domain/planner/transfer';
import type { PlanContext, PlannedStep, PlanResult, ServerContext, StepTarget } from '../src/domain/planner/types';
import { ServerModel } from '../src/domain/servers/model';
import type { PlannedStepRef } from '../src/domain/contracts/conversations';
import { clip } from '../src/domain/text';

/* What planning an instruction needs around the planner: its context, the policy's judgement, and the steps as stored. */

async function serverContext(serverId: Types.ObjectId | null | undefined): Promise<ServerContext | null> {
  const server = serverId ? await ServerModel.findById(serverId, { title: 1, username: 1, fingerprint: 1 }).lean() : null;
  if (!server) return null;
  const os = server.fingerprint?.os;
  return { title: server.title, username: server.username, os: os ? { name: os.name ?? null, version: os.version ?? null, kernel: os.kernel ?? null } : null };
}

/**
 * What the planner is told (the server, or the plan and both its servers) and which server each step
 * target means; a string says what is missing.
 */
export async function planContext(conversation: Conversation): Promise<{ context: PlanContext; servers: Partial<Record<StepTarget, Types.ObjectId>> } | string> {
  if (conversation.chatable_type === 'server') {
    const server = await serverContext(conversation.server_id);
    return server ? { context: { kind: 'server', server }, servers: { server: conversation.server_id } } : 'The conversation’s server was deleted.';
  }
  const plan = await MigrationPlanModel.findById(conversation.chatable_id).lean();
  if (!plan) return 'The migration plan was deleted.';
  const [source, target] = await Promise.all([serverContext(plan.source_server_id), serverContext(plan.target_server_id)]);
  if (!source || !target) return `The migration plan’s ${source ? 'target' : 'source'} server was deleted.`;
  return {
    context: { kind: 'migration_plan', title: plan.title, notes: plan.notes ?? '', source, target },
    servers: { source: plan.source_server_id, target: plan.target_server_id },
  };
}

export const refOf = (step: ConversationStep, index: number): PlannedStepRef => ({
  stepId: step._id.toString(),
  index,
  title: step.title,
  serverId: step.server_id?.toString() ?? '',
  refused: !!step.refused,
  needsApproval: !!step.approval && !step.approval.decision,
  sourceServerId: step.transfer ? (step.source_server_id?.toString() ?? '') : null,
});

/**
 * Asks the planner, heartbeating meanwhile (an LLM may take minutes). A planner that cannot work as
 * configured (bad key, unknown model) fails the instruction; anything else is retried.
 */
export async function plannerCall(call: () => Promise<PlanResult>): Promise<PlanResult> {
  const ctx = Context.current();
  const ticker = setInterval(() => ctx.heartbeat(), PLANNING_HEARTBEAT_MS);
  try {
    return await call();
  } catch (error) {
    if ((error as Error).name === 'LlmConfigurationError') return { ok: false, reason: (error as Error).message };
    throw error;
  } finally {
    clearInterval(ticker);
  }
}

const PLANNING_HEARTBEAT_MS = 5000;

export const LOG_TAIL_FOR_PLANNER = 2000;

/** Why a transfer cannot be run as planned, or null. */
function transferProblem(step: PlannedStep, context: PlanContext): string | null {
  const transfer = step.transfer;
  if (!transfer) return null;
  if (context.kind !== 'migration_plan') return 'A transfer between servers needs a migration plan.';
  if (transfer.kind === 'copy') {
    if (!transfer.from.startsWith('/') || !transfer.to.startsWith('/')) return 'A copy needs absolute directory paths on both servers.';
    // "/tmp/..", "/." and "//" are / too.
    if ([transfer.from, transfer.to].some((p) => posix.normalize(p).replace(/\/+$/, '') === '')) return 'Copying from or onto / is refused: name a directory.';
    return null;
  }
  return transfer.source_command.trim() && transfer.target_command.trim() ? null : 'A transfer needs a command on each server.';
}

/**
 * Commands sent as they are, one step each: claimed `read`, so the policy's own reading of each
 * command sets its risk (and whether it waits for a person, or is refused).
 */
export const literalPlan = (commands: readonly string[]): PlanResult => ({
  ok: true,
  steps: commands.map((command) => ({ title: `Run: ${clip(command.replace(/\s+/g, ' '), 100)}`, command, target: 'server', risk: 'read' })),
});

/** A planner may check its steps against the organization's policy (and transfer rules) before answering. */
export const refusalUnder = (policy: CommandPolicy, conversation: Conversation) => (step: PlannedStep) => {
  const verdict = judgeStep(step, policy, conversation.require_approval ?? false);
  return verdict.allowed ? null : verdict.reason;
};

/**
 * Planned steps as stored: pending, each judged by the policy (refused, or waiting for approval),
 * placed on its server (a transfer also on the plan's source).
 */
export function stepsToStore(
  planned: PlannedStep[],
  conversation: Conversation,
  messageId: Types.ObjectId,
  servers: Partial<Record<StepTarget, Types.ObjectId>>,
  context: PlanContext,
  policy: CommandPolicy,
  replanOf: Types.ObjectId | null = null,
) {
  const now = new Date();
  return planned.map((step) => {
    const verdict = judgeStep(step, policy, conversation.require_approval ?? false);
    const problem = transferProblem(step, context);
    const refused = problem ?? (verdict.allowed ? null : verdict.reason);
    return {
      _id: new Types.ObjectId(),
      message_id: messageId,
      title: step.title,
      // A transfer's line is Bosun's own, showing what really runs on each side.
      command: step.transfer ? transferCommand(step.transfer) : step.command,
      target: step.transfer ? 'target' : step.target,
      server_id: servers[step.transfer ? 'target' : step.target] ?? null,
      transfer: step.transfer ?? null,
      source_server_id: step.transfer ? (servers.source ?? null) : null,
      replan_of: replanOf,
      risk: verdict.risk,
      status: 'pending',
      approval: !refused && verdict.allowed && verdict.needsApproval ? { decision: null } : null,
      refused,
      created_at: now,
    };
  });
}
