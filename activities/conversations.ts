import { ApplicationFailure, Context } from '@temporalio/activity';
import { posix } from 'node:path';
import { Types } from 'mongoose';
import { ConversationModel, MAX_CONVERSATION_STEPS, type Conversation, type ConversationStatus, type ConversationStep } from '../src/domain/conversations/model';
import * as conversations from '../src/domain/conversations/store';
import { stepField } from '../src/domain/execution/steps';
import type { Logger } from '../src/logger';
import { MigrationPlanModel } from '../src/domain/migration-plans/model';
import { organizationPolicy } from '../src/domain/organizations/policy';
import { judgeStep, POLICY_REFUSAL, type CommandPolicy } from '../src/domain/planner/policy';
import { transferCommand } from '../src/domain/planner/transfer';
import type { PlanContext, PlannedStep, Planner, PlanResult, Risk, ServerContext, StepReport, StepTarget } from '../src/domain/planner/types';
import { organizationSecretValues } from '../src/domain/secrets/model';
import { clip } from '../src/domain/text';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { ServerModel } from '../src/domain/servers/model';
import type { SshPool } from '../src/domain/ssh/pool';
import {
  DEFAULT_STEP_LIMIT_SECONDS,
  type ConversationStepAttempt,
  type PlannedStepRef,
  type PlanOutcome,
  type StepDecision,
  type StepResult,
} from '../workflows/contracts';
import { credentialSecrets, loadVerifiedTarget } from './ssh-target';
import { executionSettings, follow, recordedResult, startStepExecution, stopLeftoverCommands } from './step-execution';

export interface ConversationActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  stepOutputLimitBytes: number;
  outputFlushMs?: number;
  planner: Planner;
}

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
async function planContext(conversation: Conversation): Promise<{ context: PlanContext; servers: Partial<Record<StepTarget, Types.ObjectId>> } | string> {
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

const refOf = (step: ConversationStep, index: number): PlannedStepRef => ({
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
async function plannerCall(call: () => Promise<PlanResult>): Promise<PlanResult> {
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

const LOG_TAIL_FOR_PLANNER = 2000;

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

/** A planner may check its steps against the organization's policy (and transfer rules) before answering. */
const refusalUnder = (policy: CommandPolicy, conversation: Conversation) => (step: PlannedStep) => {
  const verdict = judgeStep(step, policy, conversation.require_approval ?? false);
  return verdict.allowed ? null : verdict.reason;
};

/**
 * Planned steps as stored: pending, each judged by the policy (refused, or waiting for approval),
 * placed on its server (a transfer also on the plan's source).
 */
function stepsToStore(
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

interface FinishConversation {
  conversationId: string;
  status: ConversationStatus;
  /** Given: stored as is (null for none). Left out: worked out from the steps. */
  error?: string | null;
  /** The index of the step that ended the last instruction (failed, refused or rejected). */
  failedStep?: number;
}

/** The last line a step's log ends with: a note such as "--- rejected by …; not run ---", or output. */
function lastLine(output: string | null | undefined): string {
  const lines = (output ?? '').split('\n').map((line) => line.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').replace(/^---\s*/, '').replace(/\s*---$/, '');
}

/**
 * One line saying why a conversation's last instruction failed or was cancelled: the step that ended
 * it (its title, position, server and exit code, or the reason it was refused, rejected or could not
 * reach its server), or the instruction the planner could not plan.
 */
async function outcomeLine(conversation: Conversation, status: ConversationStatus, failedStep: number | undefined): Promise<string> {
  const steps = conversation.steps as ConversationStep[];
  const step = failedStep === undefined ? undefined : steps[failedStep];
  const message = conversation.messages.at(-1);
  if (!step) {
    const planning = [...steps].reverse().find((s) => s.title === 'Plan the instruction' && s.command === '' && (!message || s.message_id.equals(message._id)));
    // The reason's first line says what happened (not understood, refused as destructive, planner unreachable).
    if (planning) return `Could not plan "${clip(message?.text ?? '', 60)}": ${(planning.output ?? '').split('\n').find((line) => line.trim())?.trim() ?? ''}`;
    return status === 'cancelled' ? 'Cancelled' : 'The instruction failed';
  }
  const siblings = steps.filter((s) => s.message_id.equals(step.message_id));
  const position = `(${siblings.indexOf(step) + 1}/${siblings.length})`;
  const server = step.server_id ? await ServerModel.findById(step.server_id, { title: 1 }).lean() : null;
  const where = step.server_id ? ` on ${server?.title ?? step.server_id.toString()}` : '';
  const head = `Step "${step.title}" ${position}`;
  if (step.refused) {
    const why = step.refused.split('\n')[0]!;
    return why.startsWith(POLICY_REFUSAL) ? `${head} was refused by the organization's command policy: ${why.slice(POLICY_REFUSAL.length)}` : `${head} was refused: ${why}`;
  }
  if (step.approval?.decision === 'rejected') return `${head} was rejected by ${step.approval.decided_by ?? 'a person'}`;
  if (step.last_exit?.timed_out) return `${head} failed${where}: timed out`;
  if (step.exit_code !== null && step.exit_code !== undefined) return `${head} failed${where}: exit code ${step.exit_code}`;
  return `${head} failed${where}: ${lastLine(step.output) || 'no exit code'}`;
}

export function createConversationActivities({ secretBox, sshPool, log, stepOutputLimitBytes, outputFlushMs = 200, planner }: ConversationActivityDeps) {
  const settings = executionSettings({ sshPool, log, stepOutputLimitBytes, outputFlushMs });

  async function load(conversationId: string) {
    const conversation = await ConversationModel.findById(conversationId).lean<Conversation>();
    if (!conversation) throw ApplicationFailure.nonRetryable(`Conversation ${conversationId} does not exist`, 'ConversationNotFound');
    return conversation;
  }

  /**
   * Fails the steps still pending or running (of those `which` picks) as not run, saying why — a refused
   * step with its own reason; a command still running is stopped first.
   */
  async function closeSteps(conversation: Conversation, reason: string, which: (index: number) => boolean = () => true) {
    const running = (conversation.steps as ConversationStep[]).filter((step, index) => step.status === 'running' && step.pgid && which(index));
    await Promise.all(running.map((step) => stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid!])));
    await conversations.closeSteps(conversation, reason, which);
  }

  /** A step that stands for the instruction itself, failed with why it could not be planned. */
  async function failPlanning(conversation: Conversation, messageId: Types.ObjectId, reason: string, risk: Risk = 'read'): Promise<PlanOutcome> {
    const now = new Date();
    await conversations.storePlan(conversation._id, messageId, [
      {
        message_id: messageId, title: 'Plan the instruction', command: '', target: conversation.chatable_type === 'server' ? 'server' : 'target',
        server_id: null, risk, status: 'failed', execution_success: false, output: `${reason}\n`, created_at: now, completed_at: now,
      },
    ]);
    return { ok: false };
  }

  return {
    /**
     * Plans one instruction and persists its steps as pending (each judged by the organization's
     * policy), or one failed step saying why it could not be planned. Planned once: a retry returns
     * the steps already stored.
     */
    async planMessage({ conversationId, messageId }: { conversationId: string; messageId: string }): Promise<PlanOutcome> {
      const conversation = await load(conversationId);
      const message = conversation.messages.find((m) => m._id.toString() === messageId);
      if (!message) throw ApplicationFailure.nonRetryable(`Conversation ${conversationId} has no message ${messageId}`, 'MessageNotFound');
      const plannedAlready = () => {
        const steps = (conversation.steps as ConversationStep[]).map((step, index) => ({ step, index })).filter(({ step }) => step.message_id.equals(message._id));
        if (steps.some(({ step }) => step.title === 'Plan the instruction' && step.command === '')) return { ok: false } as const;
        return { ok: true, steps: steps.map(({ step, index }) => refOf(step, index)) } as const;
      };
      if (message.planned) return plannedAlready();

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return failPlanning(conversation, message._id, planning);
      const policy = await organizationPolicy(conversation.organization_id);
      const result = await plannerCall(() => planner.plan(message.text, planning.context, { refusal: refusalUnder(policy, conversation) }));
      if (!result.ok) return failPlanning(conversation, message._id, result.reason, result.risk);
      if (conversation.steps.length + result.steps.length > MAX_CONVERSATION_STEPS) {
        return failPlanning(conversation, message._id, `This instruction needs ${result.steps.length} steps, more than the ${MAX_CONVERSATION_STEPS} a conversation may hold: start a new conversation.`);
      }
      const steps = stepsToStore(result.steps, conversation, message._id, planning.servers, planning.context, policy);
      if (!(await conversations.storePlan(conversation._id, message._id, steps))) {
        Object.assign(conversation, await load(conversationId));
        return plannedAlready();
      }
      const offset = conversation.steps.length;
      return { ok: true, steps: steps.map((step, i) => refOf(step as unknown as ConversationStep, offset + i)) };
    },

    /** Planning failed for good (the planner unreachable through every retry): the instruction fails, saying why. */
    async planningFailed({ conversationId, messageId, message }: { conversationId: string; messageId: string; message: string }): Promise<void> {
      const conversation = await load(conversationId);
      await failPlanning(conversation, new Types.ObjectId(messageId), `The planner (${planner.name}) could not be reached: ${message}`);
    },

    /**
     * After a step failed: asks the planner for another way (when it can re-plan, at most
     * maxReplans times per instruction). The instruction's steps not yet run are closed as replaced
     * and the new ones stored as pending; a retry returns the steps already stored.
     */
    async replanAfterFailure({ conversationId, messageId, failedStepId, round }: { conversationId: string; messageId: string; failedStepId: string; round: number }): Promise<PlanOutcome> {
      if (!planner.replan || round > (planner.maxReplans ?? 0)) return { ok: false };
      const conversation = await load(conversationId);
      const steps = conversation.steps as ConversationStep[];
      const failedIndex = steps.findIndex((s) => s._id.toString() === failedStepId);
      const message = conversation.messages.find((m) => m._id.toString() === messageId);
      if (failedIndex < 0 || !message) throw ApplicationFailure.nonRetryable(`Conversation ${conversationId} has no step ${failedStepId}`, 'StepNotFound');
      const storedFor = (all: ConversationStep[]): PlanOutcome => ({
        ok: true,
        steps: all.map((step, index) => ({ step, index })).filter(({ step }) => step.replan_of?.toString() === failedStepId).map(({ step, index }) => refOf(step, index)),
      });
      const stored = storedFor(steps);
      if (stored.ok && stored.steps.length) return stored;

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return { ok: false };
      const policy = await organizationPolicy(conversation.organization_id);
      const history: StepReport[] = steps
        .filter((step, index) => step.message_id.equals(message._id) && index <= failedIndex && (step.status === 'completed' || step.status === 'failed'))
        .map((step) => ({ title: step.title, command: step.command ?? '', target: step.target as StepTarget, status: step.status as 'completed' | 'failed', log: (step.output ?? '').slice(-LOG_TAIL_FOR_PLANNER) }));
      const result = await plannerCall(() => planner.replan!(message.text, planning.context, history, { refusal: refusalUnder(policy, conversation) }));
      const failed = steps[failedIndex]!;
      if (!result.ok || result.steps.length === 0) {
        const reason = result.ok ? 'it proposed nothing more' : result.reason;
        await conversations.noteOnStep(conversation._id, failedIndex, failed.output, `asked for another way, the planner gave up: ${reason.trim()}`);
        return { ok: false };
      }
      if (steps.length + result.steps.length > MAX_CONVERSATION_STEPS) return { ok: false };

      // The rest of the failed plan will not run: replaced by the new steps.
      await closeSteps(conversation, `Not run: replaced by a new plan after "${failed.title}" failed`, (index) => index > failedIndex && steps[index]!.message_id.equals(message._id));
      const replacement = stepsToStore(result.steps, conversation, message._id, planning.servers, planning.context, policy, failed._id);
      await conversations.storeReplacement(conversation._id, failed._id, replacement);
      return storedFor((await load(conversationId)).steps as ConversationStep[]);
    },

    async setConversationStatus({ conversationId, status }: { conversationId: string; status: ConversationStatus }): Promise<void> {
      await conversations.setStatus(conversationId, status);
    },

    /** A person's decision on a step; a rejected step fails as not run. */
    async recordDecision({ conversationId, index, approved, by }: StepDecision & { conversationId: string; index: number }): Promise<void> {
      await conversations.recordDecision(conversationId, index, { approved, by });
    },

    /**
     * Runs one step's command to the end, heartbeating, streaming its output into the step's
     * execution log. A command that already finished (its worker died before reporting) is not run again.
     */
    async runConversationStep(input: ConversationStepAttempt): Promise<StepResult> {
      const { conversationId, index } = input;
      const [conversation, target, organizationSecrets] = await Promise.all([
        ConversationModel.findById(conversationId, { steps: { $slice: [index, 1] } }).lean<Conversation>(),
        loadVerifiedTarget(input.serverId, secretBox),
        organizationSecretValues(input.organizationId, secretBox),
      ]);
      const step = conversation?.steps[0] as ConversationStep | undefined;
      if (!step || step._id.toString() !== input.stepId) throw ApplicationFailure.nonRetryable(`Conversation ${conversationId} has no step ${input.stepId}`, 'StepNotFound');
      const recorded = recordedResult(step, 0);
      if (recorded) return recorded;
      const execution = startStepExecution(settings, {
        attempt: { runId: conversationId, serverId: input.serverId, organizationId: input.organizationId, index, exitAttempt: 0, finalExitAttempt: true },
        step: { ...step, retries: 0 },
        target,
        secrets: [...credentialSecrets(target), ...organizationSecrets],
        limitSeconds: DEFAULT_STEP_LIMIT_SECONDS,
        steps: conversations.conversationSteps(conversationId),
        successStatus: 'completed',
        resultFields: (succeeded) => ({ [stepField(index, 'execution_success')]: succeeded }),
        failureNote: true,
      });
      return follow(execution);
    },

    /** A step whose activity failed for good (server unreachable or refusing us): failed, with the reason. */
    async failConversationStep({ conversationId, index, message }: { conversationId: string; index: number; message: string }): Promise<void> {
      const conversation = await ConversationModel.findById(conversationId, { steps: { $slice: [index, 1] } }).lean<Conversation>();
      const step = conversation?.steps[0] as ConversationStep | undefined;
      if (!step) return;
      if (step.pgid) await stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid]);
      await conversations.failStep(conversationId, index, step, message);
    },

    /** Every step still pending or running fails, with the reason (a refused step with its own). */
    async closeOpenSteps({ conversationId, reason }: { conversationId: string; reason: string }): Promise<void> {
      await closeSteps(await load(conversationId), reason);
    },

    /**
     * The conversation's final status, with its one-line `error` when it failed or was cancelled:
     * which step (`failedStep`, or the instruction that could not be planned) and why. Returns that line.
     */
    async finishConversation({ conversationId, status, error, failedStep }: FinishConversation): Promise<string | null> {
      const line = error !== undefined ? error : status === 'completed' ? null : await outcomeLine(await load(conversationId), status, failedStep);
      await conversations.finish(conversationId, status, line);
      return line;
    },
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
