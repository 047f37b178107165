import {
  ActivityCancellationType,
  allHandlersFinished,
  CancellationScope,
  CancelledFailure,
  condition,
  continueAsNew,
  defineSignal,
  defineUpdate,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { isPatched, PATCHES } from './patches';
import type { ConversationActivities } from '../activities/conversations';
import type { LegacyConversationActivities } from '../activities/index';
import type { WorkflowOutcomeActivities } from '../activities/workflow-outcome';
import type { TransferActivities } from '../activities/transfers';
import { CONVERSATION_MESSAGE_SIGNAL, STEP_DECISION_UPDATE } from '../src/domain/contracts/workflow-ids';
import { DEFAULT_STEP_LIMIT_SECONDS } from '../src/domain/contracts/runs';
import { type ConversationInput, type ConversationResult, type PlannedStepRef, type StepDecision } from '../src/domain/contracts/conversations';
import { failure, NON_RETRYABLE_FAILURES } from '../src/domain/contracts/failure-types';
import { endsAsItsOutcome, messageOf, RECORDED_WITHOUT_RESULT } from './failures';

export const messageSignal = defineSignal<[{ messageId: string }]>(CONVERSATION_MESSAGE_SIGNAL);
/** A person's decision on a step: an update, so a second decision on the same step is refused at once. */
export const decisionUpdate = defineUpdate<void, [StepDecision]>(STEP_DECISION_UPDATE);

const bookkeepingOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
} as const;
const bookkeeping = proxyLocalActivities<ConversationActivities & WorkflowOutcomeActivities>(bookkeepingOptions);
// A conversation started before every activity had a unique name replays (and goes on) with the old ones.
const legacyBookkeeping = proxyLocalActivities<LegacyConversationActivities>(bookkeepingOptions);

// Planning may call an LLM (several attempts, each with its own retries): a regular, heartbeating activity, retried on transport errors.
const planning = proxyActivities<ConversationActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

// Each step: one heartbeating SSH activity; transport failures retry with backoff for about 45 s.
const execution = proxyActivities<ConversationActivities>({
  startToCloseTimeout: (DEFAULT_STEP_LIMIT_SECONDS + 600) * 1000,
  heartbeatTimeout: '15 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 8, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

// A transfer moves data for as long as it takes (hours for a large tree), heartbeating; a retry resumes a copy.
const transfers = proxyActivities<TransferActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '15 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

/** How an instruction ended; `step` is the index of the step that ended it (failed, refused or rejected). */
type MessageOutcome = { status: 'completed' } | { status: 'failed' | 'rejected'; step?: number };

/**
 * One conversation: each instruction (the first, then follow-ups sent as signals) is planned into
 * steps, which run one at a time. A step that fails, is refused or is rejected ends its instruction:
 * its later steps fail as "not run". A rejection ends the conversation (cancelled); cancelling the
 * workflow stops the running command. Idle, it ends; a follow-up starts it again (signal-with-start).
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationResult> {
  const { conversationId, organizationId } = input;
  // Decided once, at the start: a history recorded before the rename keeps the names it was recorded with.
  const store = isPatched(PATCHES.uniqueActivityNames)
    ? { setStatus: bookkeeping.setConversationStatus, failStep: bookkeeping.failConversationStep, finish: bookkeeping.finishConversation }
    : { setStatus: legacyBookkeeping.setStatus, failStep: legacyBookkeeping.failStep, finish: legacyBookkeeping.finish };
  let instructions = 0;
  let stepsRun = 0;
  const inbox = [...input.inbox];
  const decisions = new Map<string, StepDecision>();
  setHandler(messageSignal, ({ messageId }) => {
    if (!inbox.includes(messageId)) inbox.push(messageId);
  });
  setHandler(
    decisionUpdate,
    (decision) => {
      decisions.set(decision.stepId, decision);
    },
    {
      validator: ({ stepId }) => {
        if (decisions.has(stepId)) throw new Error(`The step was already ${decisions.get(stepId)!.approved ? 'approved' : 'rejected'}`);
      },
    },
  );

  // Each step's activity is named after the step in the Temporal UI.
  const runStep = (step: PlannedStepRef) =>
    // A step planned before transfers existed has no sourceServerId at all: a command.
    step.sourceServerId
      ? transfers.runTransferStep.executeWithOptions({ summary: step.title }, [
          { conversationId, organizationId, stepId: step.stepId, index: step.index, sourceServerId: step.sourceServerId, targetServerId: step.serverId },
        ])
      : execution.runConversationStep.executeWithOptions({ summary: step.title }, [{ conversationId, organizationId, stepId: step.stepId, index: step.index, serverId: step.serverId }]);

  /** Plans one instruction; a planner unreachable through every retry fails it (the conversation goes on). */
  async function plan(messageId: string) {
    try {
      return await planning.planMessage({ conversationId, messageId });
    } catch (error) {
      if (isCancellation(error)) throw error;
      await bookkeeping.planningFailed({ conversationId, messageId, message: messageOf(error) });
      return { ok: false } as const;
    }
  }

  /** Another way after a failed step; a planner unreachable through every retry just means none. */
  async function replan(messageId: string, failedStepId: string, round: number) {
    try {
      return await planning.replanAfterFailure({ conversationId, messageId, failedStepId, round });
    } catch (error) {
      if (isCancellation(error)) throw error;
      return { ok: false } as const;
    }
  }

  async function runSteps(messageId: string, steps: PlannedStepRef[], replans = 0): Promise<MessageOutcome> {
    // Nothing of an instruction runs if the policy refuses any part of it.
    const refused = steps.find((step) => step.refused);
    if (refused) {
      await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: another step of this instruction was refused by the command policy.' });
      return { status: 'failed', step: refused.index };
    }
    for (const [position, step] of steps.entries()) {
      const where = `${position + 1}/${steps.length} ${step.title ?? `#${step.index + 1}`}`;
      if (step.needsApproval) {
        setCurrentDetails(`step ${where}: waiting for a person's approval`);
        await store.setStatus({ conversationId, status: 'awaiting_approval' });
        await condition(() => decisions.has(step.stepId));
        const decision = decisions.get(step.stepId)!;
        await bookkeeping.recordDecision({ conversationId, index: step.index, ...decision });
        if (!decision.approved) {
          await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: an earlier step was rejected.' });
          return { status: 'rejected', step: step.index };
        }
        await store.setStatus({ conversationId, status: 'running' });
      }
      setCurrentDetails(`step ${where} running`);
      let succeeded: boolean;
      try {
        succeeded = (await runStep(step)).status === 'success';
      } catch (error) {
        if (isCancellation(error)) throw error;
        // The server could not be reached or refused us.
        await store.failStep({ conversationId, index: step.index, message: messageOf(error) });
        succeeded = false;
      }
      stepsRun += 1;
      if (!succeeded) {
        // A planner that can re-plan is asked for another way, a bounded number of times.
        if (isPatched(PATCHES.replanAfterFailure)) {
          const next = await replan(messageId, step.stepId, replans + 1);
          if (next.ok) return runSteps(messageId, next.steps, replans + 1);
        }
        await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: an earlier step failed.' });
        return { status: 'failed', step: step.index };
      }
    }
    return { status: 'completed' };
  }

  let finished = false;
  try {
    for (;;) {
      let outcome: MessageOutcome = { status: 'completed' };
      while (inbox.length) {
        const messageId = inbox[0]!;
        setCurrentDetails('planning an instruction');
        const planned = await plan(messageId);
        inbox.shift();
        instructions += 1;
        outcome = planned.ok ? await runSteps(messageId, planned.steps) : { status: 'failed' };
        if (outcome.status === 'rejected') break;
        if (workflowInfo().continueAsNewSuggested) {
          await condition(allHandlersFinished);
          await continueAsNew<typeof conversationWorkflow>({ ...input, inbox });
        }
      }
      if (outcome.status === 'rejected') {
        // A person said no: the conversation is cancelled, here and in Temporal (a Cancelled workflow).
        const error = await store.finish({ conversationId, status: 'cancelled', failedStep: outcome.step });
        finished = true;
        setCurrentDetails(`cancelled: ${error}`);
        if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
        await bookkeeping.cancelOwnWorkflow();
        await CancellationScope.current().cancelRequested;
        throw new CancelledFailure('A step was rejected');
      }
      const error = await store.finish({ conversationId, status: outcome.status, failedStep: outcome.status === 'completed' ? undefined : outcome.step });
      // A follow-up that arrived while finishing is this run's to plan.
      await condition(allHandlersFinished);
      if (inbox.length) continue;
      if (outcome.status === 'failed') {
        setCurrentDetails(`failed: ${error}`);
        if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
        throw failure('ConversationFailed', error ?? 'The instruction failed', { details: [{ step: outcome.step ?? null }] });
      }
      setCurrentDetails(`completed: ${instructions} instruction(s), ${stepsRun} step(s) run`);
      return { status: 'completed', instructions, steps_run: stepsRun };
    }
  } catch (error) {
    if (!isCancellation(error) || finished) throw error;
    await CancellationScope.nonCancellable(async () => {
      await bookkeeping.closeOpenSteps({ conversationId, reason: 'Cancelled.' });
      await store.finish({ conversationId, status: 'cancelled', error: 'Cancelled' });
    });
    setCurrentDetails('cancelled');
    if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
    throw error;
  }
}
