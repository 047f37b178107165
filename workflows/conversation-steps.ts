import { condition, isCancellation, setCurrentDetails } from '@temporalio/workflow';
import { isPatched, PATCHES } from './patches';
import { type PlannedStepRef, type StepDecision } from '../src/domain/contracts/conversations';
import { messageOf } from './failures';
import { bookkeeping, execution, planning, transfers, type ConversationStore } from './conversation-activities';

/*
 * An instruction's steps, one at a time: none runs if the policy refused one; a step that needs it
 * waits for a person's decision; a failed step asks the planner for another way, else ends the instruction.
 */

/** One conversation's workflow as it goes: what its steps and its instructions share. */
export interface ConversationState {
  conversationId: string;
  organizationId: string;
  store: ConversationStore;
  /** Instructions not yet planned: the first, then follow-ups sent as signals. */
  inbox: string[];
  /** People's decisions by step id, as the update brought them. */
  decisions: Map<string, StepDecision>;
  instructions: number;
  stepsRun: number;
}

/** How an instruction ended; `step` is the index of the step that ended it (failed, refused or rejected). */
export type MessageOutcome = { status: 'completed' } | { status: 'failed' | 'rejected'; step?: number };

export async function runSteps(conversation: ConversationState, messageId: string, steps: PlannedStepRef[], replans = 0): Promise<MessageOutcome> {
  const { conversationId } = conversation;
  // Nothing of an instruction runs if the policy refuses any part of it.
  const refused = steps.find((step) => step.refused);
  if (refused) {
    await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: another step of this instruction was refused by the command policy.' });
    return { status: 'failed', step: refused.index };
  }
  for (const [position, step] of steps.entries()) {
    const where = `${position + 1}/${steps.length} ${step.title ?? `#${step.index + 1}`}`;
    if (step.needsApproval && !(await approved(conversation, step, where))) return { status: 'rejected', step: step.index };
    setCurrentDetails(`step ${where} running`);
    const succeeded = await ranToSuccess(conversation, step);
    conversation.stepsRun += 1;
    if (!succeeded) return afterFailure(conversation, messageId, step, replans);
  }
  return { status: 'completed' };
}

/** Waits for a person's decision on the step and records it; a rejection closes the instruction's other steps. */
async function approved(conversation: ConversationState, step: PlannedStepRef, where: string): Promise<boolean> {
  const { conversationId, store, decisions } = conversation;
  setCurrentDetails(`step ${where}: waiting for a person's approval`);
  await store.setStatus({ conversationId, status: 'awaiting_approval' });
  await condition(() => decisions.has(step.stepId));
  const decision = decisions.get(step.stepId)!;
  await bookkeeping.recordDecision({ conversationId, index: step.index, ...decision });
  if (!decision.approved) {
    await bookkeeping.closeOpenSteps({ conversationId, reason: 'Not run: an earlier step was rejected.' });
    return false;
  }
  await store.setStatus({ conversationId, status: 'running' });
  return true;
}

/** Runs the step; a server that could not be reached or refused us fails it. */
async function ranToSuccess(conversation: ConversationState, step: PlannedStepRef): Promise<boolean> {
  try {
    return (await runStep(conversation, step)).status === 'success';
  } catch (error) {
    if (isCancellation(error)) throw error;
    await conversation.store.failStep({ conversationId: conversation.conversationId, index: step.index, message: messageOf(error) });
    return false;
  }
}

// Each step's activity is named after the step in the Temporal UI.
const runStep = ({ conversationId, organizationId }: ConversationState, step: PlannedStepRef) =>
  // A step planned before transfers existed has no sourceServerId at all: a command.
  step.sourceServerId
    ? transfers.runTransferStep.executeWithOptions({ summary: step.title }, [
        { conversationId, organizationId, stepId: step.stepId, index: step.index, sourceServerId: step.sourceServerId, targetServerId: step.serverId },
      ])
    : execution.runConversationStep.executeWithOptions({ summary: step.title }, [{ conversationId, organizationId, stepId: step.stepId, index: step.index, serverId: step.serverId }]);

/** After a failed step: a planner that can re-plan is asked for another way, a bounded number of times; else the instruction fails. */
async function afterFailure(conversation: ConversationState, messageId: string, step: PlannedStepRef, replans: number): Promise<MessageOutcome> {
  if (isPatched(PATCHES.replanAfterFailure)) {
    const next = await replan(conversation.conversationId, messageId, step.stepId, replans + 1);
    if (next.ok) return runSteps(conversation, messageId, next.steps, replans + 1);
  }
  await bookkeeping.closeOpenSteps({ conversationId: conversation.conversationId, reason: 'Not run: an earlier step failed.' });
  return { status: 'failed', step: step.index };
}

/** Another way after a failed step; a planner unreachable through every retry just means none. */
async function replan(conversationId: string, messageId: string, failedStepId: string, round: number) {
  try {
    return await planning.replanAfterFailure({ conversationId, messageId, failedStepId, round });
  } catch (error) {
    if (isCancellation(error)) throw error;
    return { ok: false } as const;
  }
}
