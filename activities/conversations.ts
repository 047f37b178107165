import { Types } from 'mongoose';
import { ConversationModel, MAX_CONVERSATION_STEPS, type Conversation, type ConversationStatus, type ConversationStep } from '../src/domain/conversations/model';
import * as conversations from '../src/domain/conversations/store';
import { conversationPolicy } from '../src/domain/organizations/policy';
import type { Planner, Risk, StepReport, StepTarget } from '../src/domain/planner/types';
import { organizationSecretValues } from '../src/domain/secrets/model';
import { DEFAULT_STEP_LIMIT_SECONDS, type StepResult } from '../src/domain/contracts/runs';
import { type ConversationStepAttempt, type PlanOutcome, type StepDecision } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { frozenLine } from '../src/domain/freezes/coverage';
import { credentialSecrets, loadVerifiedTarget } from './ssh-target';
import { executionSettings, recordedCommandResult, startStepExecution, type StepExecutionDeps } from './step-execution';
import { follow } from './step-follow';
import { stopLeftoverCommands } from './leftover-commands';
import { literalPlan, LOG_TAIL_FOR_PLANNER, planContext, plannerCall, refOf, refusalUnder, stepsToStore } from './conversation-planning';
import { outcomeLine, type FinishConversation } from './conversation-outcome';

export interface ConversationActivityDeps extends StepExecutionDeps {
  planner: Planner;
}

export function createConversationActivities({ secretBox, sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs = 200, planner }: ConversationActivityDeps) {
  const settings = executionSettings({ sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs });

  async function load(conversationId: string) {
    const conversation = await ConversationModel.findById(conversationId).lean<Conversation>();
    if (!conversation) throw failure('ConversationNotFound', `Conversation ${conversationId} does not exist`);
    return conversation;
  }

  /**
   * Fails the steps still pending or running (of those `which` picks) as not run, saying why — a refused
   * step with its own reason; a command still running is stopped once its step is closed.
   */
  async function closeSteps(conversation: Conversation, reason: string, which: (index: number) => boolean = () => true) {
    const running = (conversation.steps as ConversationStep[])
      .map((step, index) => ({ step, index }))
      .filter(({ step, index }) => step.status === 'running' && step.pgid && which(index));
    // Closed first: a command killed before would end as its own failure in the execution still holding it.
    await conversations.closeSteps(conversation, reason, which);
    await Promise.all(
      running.map(({ step, index }) =>
        stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid!], { kind: 'conversation', id: String(conversation._id), stepIndex: index }),
      ),
    );
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
      if (!message) throw failure('MessageNotFound', `Conversation ${conversationId} has no message ${messageId}`);
      const plannedAlready = () => {
        const steps = (conversation.steps as ConversationStep[]).map((step, index) => ({ step, index })).filter(({ step }) => step.message_id.equals(message._id));
        if (steps.some(({ step }) => step.title === 'Plan the instruction' && step.command === '')) return { ok: false } as const;
        return { ok: true, steps: steps.map(({ step, index }) => refOf(step, index)) } as const;
      };
      if (message.planned) return plannedAlready();

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return failPlanning(conversation, message._id, planning);
      const policy = await conversationPolicy(conversation);
      // Commands given as they are (an agent's `run_commands`) are not planned: each is a step, judged like any other.
      const result = message.commands?.length
        ? literalPlan(message.commands)
        : await plannerCall(() => planner.plan(message.text, planning.context, { refusal: refusalUnder(policy, conversation) }));
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
      // Commands given as they are were not planned: nothing to ask the planner for.
      if (conversation.messages.find((m) => m._id.toString() === messageId)?.commands?.length) return { ok: false };
      const steps = conversation.steps as ConversationStep[];
      const failedIndex = steps.findIndex((s) => s._id.toString() === failedStepId);
      const message = conversation.messages.find((m) => m._id.toString() === messageId);
      if (failedIndex < 0 || !message) throw failure('StepNotFound', `Conversation ${conversationId} has no step ${failedStepId}`);
      const storedFor = (all: ConversationStep[]): PlanOutcome => ({
        ok: true,
        steps: all.map((step, index) => ({ step, index })).filter(({ step }) => step.replan_of?.toString() === failedStepId).map(({ step, index }) => refOf(step, index)),
      });
      const stored = storedFor(steps);
      if (stored.ok && stored.steps.length) return stored;

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return { ok: false };
      const policy = await conversationPolicy(conversation);
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
      const [step, target, organizationSecrets] = await Promise.all([
        conversations.findStep(conversationId, index),
        loadVerifiedTarget(input.serverId, secretBox),
        organizationSecretValues(input.organizationId, secretBox),
      ]);
      if (!step || step._id.toString() !== input.stepId) throw failure('StepNotFound', `Conversation ${conversationId} has no step ${input.stepId}`);
      const attempt = { runId: conversationId, serverId: input.serverId, organizationId: input.organizationId, index, exitAttempt: 0, finalExitAttempt: true };
      const audit = { kind: 'conversation', stepId: input.stepId, stepName: step.title } as const;
      const recorded = await recordedCommandResult(step, { attempt, audit });
      if (recorded) return recorded;
      // A step not yet begun does not begin while a change freeze covers its server.
      const frozen = step.status === 'pending' ? await frozenLine(input.organizationId, [input.serverId]) : null;
      if (frozen) throw failure('ChangeFrozen', `Not run: ${frozen}`);
      const execution = startStepExecution(settings, {
        attempt,
        step: { ...step, retries: 0 },
        target,
        secrets: [...credentialSecrets(target), ...organizationSecrets],
        limitSeconds: DEFAULT_STEP_LIMIT_SECONDS,
        steps: conversations.conversationSteps(conversationId),
        failureNote: true,
        audit,
      });
      return follow(execution);
    },

    /** A step whose activity failed for good (server unreachable or refusing us): failed, with the reason. */
    async failConversationStep({ conversationId, index, message }: { conversationId: string; index: number; message: string }): Promise<void> {
      const step = await conversations.findStep(conversationId, index);
      if (!step) return;
      await conversations.failStep(conversationId, index, step, message);
      if (step.pgid) await stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid], { kind: 'conversation', id: conversationId, stepIndex: index });
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
