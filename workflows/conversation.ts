import {
  allHandlersFinished,
  CancellationScope,
  CancelledFailure,
  condition,
  continueAsNew,
  defineSignal,
  defineUpdate,
  isCancellation,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { CONVERSATION_MESSAGE_SIGNAL, STEP_DECISION_UPDATE } from '../src/domain/contracts/workflow-ids';
import { type ConversationInput, type ConversationResult, type StepDecision } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { endsAsItsOutcome, messageOf, RECORDED_WITHOUT_RESULT } from './failures';
import { bookkeeping, conversationStore, planning } from './conversation-activities';
import { runSteps, type ConversationState, type MessageOutcome } from './conversation-steps';

export const messageSignal = defineSignal<[{ messageId: string }]>(CONVERSATION_MESSAGE_SIGNAL);
/** A person's decision on a step: an update, so a second decision on the same step is refused at once. */
export const decisionUpdate = defineUpdate<void, [StepDecision]>(STEP_DECISION_UPDATE);

/**
 * One conversation: each instruction (the first, then follow-ups sent as signals) is planned into
 * steps, which run one at a time. A step that fails, is refused or is rejected ends its instruction:
 * its later steps fail as "not run". A rejection ends the conversation (cancelled); cancelling the
 * workflow stops the running command. Idle, it ends; a follow-up starts it again (signal-with-start).
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationResult> {
  const conversation = listening(input);
  const { conversationId } = conversation;
  let finished = false;
  try {
    for (;;) {
      const outcome = await answerInbox(conversation, input);
      if (outcome.status === 'rejected') {
        const error = await conversation.store.finish({ conversationId, status: 'cancelled', failedStep: outcome.step });
        finished = true;
        return await endRejected(error);
      }
      const error = await conversation.store.finish({ conversationId, status: outcome.status, failedStep: outcome.status === 'completed' ? undefined : outcome.step });
      // A follow-up that arrived while finishing is this run's to plan.
      await condition(allHandlersFinished);
      if (conversation.inbox.length) continue;
      if (outcome.status === 'failed') {
        setCurrentDetails(`failed: ${error}`);
        if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
        throw failure('ConversationFailed', error ?? 'The instruction failed', { details: [{ step: outcome.step ?? null }] });
      }
      setCurrentDetails(`completed: ${conversation.instructions} instruction(s), ${conversation.stepsRun} step(s) run`);
      return { status: 'completed', instructions: conversation.instructions, steps_run: conversation.stepsRun };
    }
  } catch (error) {
    if (!isCancellation(error) || finished) throw error;
    return endCancelled(conversation, error);
  }
}

/** The conversation's state, with follow-ups and people's decisions taken in as they arrive. */
function listening(input: ConversationInput): ConversationState {
  const { conversationId, organizationId } = input;
  const conversation: ConversationState = { conversationId, organizationId, store: conversationStore(), inbox: [...input.inbox], decisions: new Map(), instructions: 0, stepsRun: 0 };
  const { inbox, decisions } = conversation;
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
  return conversation;
}

/** Plans and runs each instruction of the inbox in turn, until it is empty or one is rejected: how the last one ended. */
async function answerInbox(conversation: ConversationState, input: ConversationInput): Promise<MessageOutcome> {
  const { inbox } = conversation;
  let outcome: MessageOutcome = { status: 'completed' };
  while (inbox.length) {
    const messageId = inbox[0]!;
    setCurrentDetails('planning an instruction');
    const planned = await plan(conversation.conversationId, messageId);
    inbox.shift();
    conversation.instructions += 1;
    outcome = planned.ok ? await runSteps(conversation, messageId, planned.steps) : { status: 'failed' };
    if (outcome.status === 'rejected') break;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof conversationWorkflow>({ ...input, inbox });
    }
  }
  return outcome;
}

/** Plans one instruction; a planner unreachable through every retry fails it (the conversation goes on). */
async function plan(conversationId: string, messageId: string) {
  try {
    return await planning.planMessage({ conversationId, messageId });
  } catch (error) {
    if (isCancellation(error)) throw error;
    await bookkeeping.planningFailed({ conversationId, messageId, message: messageOf(error) });
    return { ok: false } as const;
  }
}

/** A person said no (the conversation is recorded cancelled): cancelled in Temporal too, a Cancelled workflow. */
async function endRejected(error: string | null): Promise<ConversationResult> {
  setCurrentDetails(`cancelled: ${error}`);
  if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
  await bookkeeping.cancelOwnWorkflow();
  await CancellationScope.current().cancelRequested;
  throw new CancelledFailure('A step was rejected');
}

/** The workflow was cancelled: its open steps are closed and the conversation ends cancelled, whatever cancels the rest. */
async function endCancelled({ conversationId, store }: ConversationState, error: unknown): Promise<ConversationResult> {
  await CancellationScope.nonCancellable(async () => {
    await bookkeeping.closeOpenSteps({ conversationId, reason: 'Cancelled.' });
    await store.finish({ conversationId, status: 'cancelled', error: 'Cancelled' });
  });
  setCurrentDetails('cancelled');
  if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
  throw error;
}
