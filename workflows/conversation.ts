import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  defineUpdate,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ConversationActivities } from '../activities/conversations';
import type { TransferActivities } from '../activities/transfers';
import {
  CONVERSATION_MESSAGE_SIGNAL,
  DEFAULT_STEP_LIMIT_SECONDS,
  NON_RETRYABLE_FAILURES,
  STEP_DECISION_UPDATE,
  type ConversationInput,
  type PlannedStepRef,
  type StepDecision,
} from './contracts';

export const messageSignal = defineSignal<[{ messageId: string }]>(CONVERSATION_MESSAGE_SIGNAL);
/** A person's decision on a step: an update, so a second decision on the same step is refused at once. */
export const decisionUpdate = defineUpdate<void, [StepDecision]>(STEP_DECISION_UPDATE);

const bookkeeping = proxyLocalActivities<ConversationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
});

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

const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
};

type MessageOutcome = 'completed' | 'failed' | 'rejected';

/**
 * One conversation: each instruction (the first, then follow-ups sent as signals) is planned into
 * steps, which run one at a time. A step that fails, is refused or is rejected ends its instruction:
 * its later steps fail as "not run". A rejection ends the conversation (cancelled); cancelling the
 * workflow stops the running command. Idle, it ends; a follow-up starts it again (signal-with-start).
 */
export async function conversationWorkflow(input: ConversationInput): Promise<void> {
  const { conversationId, organizationId } = input;
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

  const runStep = (step: PlannedStepRef) =>
    // A step planned before transfers existed has no sourceServerId at all: a command.
    step.sourceServerId
      ? transfers.runTransferStep({ conversationId, organizationId, stepId: step.stepId, index: step.index, sourceServerId: step.sourceServerId, targetServerId: step.serverId })
      : execution.runConversationStep({ conversationId, organizationId, stepId: step.stepId, index: step.index, serverId: step.serverId });

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
    if (steps.some((step) => step.refused)) {
      await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: another step of this instruction was refused by the command policy.' });
      return 'failed';
    }
    for (const step of steps) {
      if (step.needsApproval) {
        await bookkeeping.setStatus({ conversationId, status: 'awaiting_approval' });
        await condition(() => decisions.has(step.stepId));
        const decision = decisions.get(step.stepId)!;
        await bookkeeping.recordDecision({ conversationId, index: step.index, ...decision });
        if (!decision.approved) {
          await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: an earlier step was rejected.' });
          return 'rejected';
        }
        await bookkeeping.setStatus({ conversationId, status: 'running' });
      }
      let succeeded: boolean;
      try {
        succeeded = (await runStep(step)).status === 'success';
      } catch (error) {
        if (isCancellation(error)) throw error;
        // The server could not be reached or refused us.
        await bookkeeping.failStep({ conversationId, index: step.index, message: messageOf(error) });
        succeeded = false;
      }
      if (!succeeded) {
        // A planner that can re-plan is asked for another way, a bounded number of times.
        if (patched('replan-after-failure')) {
          const next = await replan(messageId, step.stepId, replans + 1);
          if (next.ok) return runSteps(messageId, next.steps, replans + 1);
        }
        await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: an earlier step failed.' });
        return 'failed';
      }
    }
    return 'completed';
  }

  try {
    for (;;) {
      let outcome: MessageOutcome = 'completed';
      while (inbox.length) {
        const messageId = inbox[0]!;
        const planned = await plan(messageId);
        inbox.shift();
        outcome = planned.ok ? await runSteps(messageId, planned.steps) : 'failed';
        if (outcome === 'rejected') break;
        if (workflowInfo().continueAsNewSuggested) {
          await condition(allHandlersFinished);
          await continueAsNew<typeof conversationWorkflow>({ ...input, inbox });
        }
      }
      if (outcome === 'rejected') {
        await bookkeeping.finish({ conversationId, status: 'cancelled', error: 'A step was rejected' });
        return;
      }
      await bookkeeping.finish({ conversationId, status: outcome, error: null });
      // A follow-up that arrived while finishing is this run's to plan.
      await condition(allHandlersFinished);
      if (!inbox.length) return;
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(async () => {
      await bookkeeping.closeOpenSteps({ conversationId, reason: 'Cancelled.' });
      await bookkeeping.finish({ conversationId, status: 'cancelled', error: 'Cancelled' });
    });
  }
}
