import type { Actor } from '../access/actor';
import type { Types } from 'mongoose';
import { asChange, stepField, stepTransitions, type StepKind, type StepTransitions } from '../execution/steps';
import { ConversationModel, type ChatableType, type Conversation, type ConversationStatus, type ConversationStep } from './model';
import { inTransaction } from '../database';
import { recordConversationEvent } from './notification-events';

/*
 * The conversations store: every write to a conversation goes through these transitions. Each checks
 * the state it leaves and advances the conversation's event sequence once; the API and the
 * activities call the same ones.
 */

type Id = string | Types.ObjectId;

/** The conversations that are not over: they take decisions, follow-ups and cancels. */
export const ACTIVE_CONVERSATION_STATUSES: ConversationStatus[] = ['running', 'awaiting_approval'];

/** A note at the end of a step's execution log. */
export const appendLog = (log: string | null | undefined, note: string) => `${log ?? ''}${log ? '\n' : ''}--- ${note} ---\n`;

/** A conversation as the API starts it: about a server or a migration plan (its target `server_id`, its `source_server_id`). */
export interface NewConversation {
  organization_id: Id;
  chatable_type: ChatableType;
  chatable_id: Types.ObjectId;
  server_id: Types.ObjectId;
  source_server_id?: Types.ObjectId | null;
  require_approval?: boolean;
  agent?: boolean;
  created_by: string;
  actor?: { type: 'person' | 'service_account'; id: string; name: string; token_id: string | null } | null;
  /** Its first instruction. */
  message: { _id: Types.ObjectId; text: string; sent_by: string; commands?: string[] };
}

/** A new conversation, running, with its first instruction. */
export async function createConversation({ message, ...fields }: NewConversation): Promise<Conversation> {
  return (await ConversationModel.create({ ...fields, messages: [{ ...message, created_at: new Date() }] })).toObject() as Conversation;
}

/** A conversation's one step (the others' output can be megabytes), or null when either is gone. */
export async function findStep(id: Id, index: number): Promise<ConversationStep | null> {
  const conversation = await ConversationModel.findById(id, { steps: { $slice: [index, 1] } }).lean<Conversation>();
  return (conversation?.steps[0] as ConversationStep | undefined) ?? null;
}

/** Taken back: its workflow could not be started. */
export async function deleteConversation(id: Id): Promise<void> {
  await ConversationModel.deleteOne({ _id: id });
}

/** An agent spoke in it: from now on its change and destructive steps wait for a person (never undone). */
export async function markAgentConversation(id: Id): Promise<void> {
  await ConversationModel.updateOne({ _id: id, agent: { $ne: true } }, asChange({ $set: { agent: true } }));
}

/** A follow-up instruction, and the conversation running again; false when it was cancelled meanwhile. */
export async function addMessage(id: Id, message: { _id: Types.ObjectId; text: string; sent_by: string }): Promise<boolean> {
  const pushed = await ConversationModel.updateOne(
    { _id: id, status: { $ne: 'cancelled' } },
    asChange({ $push: { messages: { ...message, created_at: new Date() } }, $set: { status: 'running', completed_at: null } }),
  );
  return pushed.modifiedCount > 0;
}

/** A follow-up taken back (its workflow could not be reached): the conversation as it was before. */
export async function withdrawMessage(id: Id, messageId: Types.ObjectId, before: Pick<Conversation, 'status' | 'completed_at'>): Promise<void> {
  await ConversationModel.updateOne(
    { _id: id, 'messages._id': messageId },
    asChange({ $pull: { messages: { _id: messageId } }, $set: { status: before.status, completed_at: before.completed_at } }),
  );
}

/** An instruction's planned steps (pending); false when it was planned already (a retry). */
export async function storePlan(id: Id, messageId: Types.ObjectId, steps: unknown[]): Promise<boolean> {
  const stored = await ConversationModel.updateOne(
    { _id: id, messages: { $elemMatch: { _id: messageId, planned: false } } },
    asChange({ $set: { 'messages.$.planned': true, status: 'running' }, $push: { steps: { $each: steps } } }),
  );
  return stored.modifiedCount > 0;
}

/** Steps that replace the rest of a plan after `failedStepId` failed; stored once. */
export async function storeReplacement(id: Id, failedStepId: Types.ObjectId, steps: unknown[]): Promise<void> {
  await ConversationModel.updateOne({ _id: id, 'steps.replan_of': { $ne: failedStepId } }, asChange({ $push: { steps: { $each: steps } } }));
}

/** A note at the end of a finished step's execution log. */
export async function noteOnStep(id: Id, index: number, log: string | null | undefined, note: string): Promise<void> {
  await ConversationModel.updateOne({ _id: id }, asChange({ $set: { [stepField(index, 'output')]: appendLog(log, note) } }));
}

/** Running ⇄ waiting for a person's approval, while the conversation is active. */
export async function setStatus(id: Id, status: ConversationStatus): Promise<void> {
  // Waiting for a person is an event; the change and it are one transaction.
  await inTransaction(async (session) => {
    const before = await ConversationModel.findOneAndUpdate({ _id: id, status: { $in: ACTIVE_CONVERSATION_STATUSES } }, asChange({ $set: { status } }), { session, projection: { status: 1 } }).lean();
    if (before?.status === 'running' && status === 'awaiting_approval') await recordConversationEvent(id, 'conversation.awaiting_approval', session);
  });
}

/** A person's decision on a step waiting for one; a rejected step fails as not run. */
export async function recordDecision(id: Id, index: number, { approved, by }: { approved: boolean; by: string }): Promise<void> {
  const now = new Date();
  const $set: Record<string, unknown> = {
    [stepField(index, 'approval.decision')]: approved ? 'approved' : 'rejected',
    [stepField(index, 'approval.decided_by')]: by,
    [stepField(index, 'approval.decided_at')]: now,
  };
  if (!approved) {
    Object.assign($set, {
      [stepField(index, 'status')]: 'failed',
      [stepField(index, 'execution_success')]: false,
      [stepField(index, 'output')]: `--- rejected by ${by}; not run ---\n`,
      [stepField(index, 'completed_at')]: now,
    });
  }
  await ConversationModel.updateOne({ _id: id, [stepField(index, 'status')]: 'pending' }, asChange({ $set }));
}

/** A conversation's step succeeds as `completed`, and its final result records whether its command succeeded (`execution_success`). */
const CONVERSATION_STEPS: StepKind = { model: ConversationModel, successStatus: 'completed', recordsExecutionSuccess: true };

/** The writes of a conversation's steps as a command or a transfer runs (see StepTransitions). */
export const conversationSteps = (id: Id): StepTransitions => stepTransitions(CONVERSATION_STEPS, id);

/** A step that failed without a result of its own (the server unreachable or refusing us): failed, with why at the end of its log. */
export async function failStep(id: Id, index: number, step: Pick<ConversationStep, 'output'>, why: string): Promise<void> {
  await conversationSteps(id).failStep(index, { log: appendLog(step.output, why) });
}

/** The fields that fail the steps still pending or running (of those `which` picks) as not run, saying why. */
function closingFields(conversation: Pick<Conversation, 'steps'>, reason: string, which: (index: number) => boolean): Record<string, unknown> {
  const now = new Date();
  const $set: Record<string, unknown> = {};
  (conversation.steps as ConversationStep[]).forEach((step, index) => {
    if ((step.status !== 'pending' && step.status !== 'running') || !which(index)) return;
    Object.assign($set, {
      [stepField(index, 'status')]: 'failed',
      [stepField(index, 'execution_success')]: false,
      // A refused step keeps its own reason.
      [stepField(index, 'output')]: step.refused ? `${step.refused}\n` : appendLog(step.output, reason.replace(/\.$/, '')),
      [stepField(index, 'completed_at')]: now,
      [stepField(index, 'pgid')]: null,
    });
  });
  return $set;
}

/**
 * The steps still pending or running (of those `which` picks) fail as not run, saying why. A
 * conversation's steps have no `cancelled`: a cancel closes them so too, with "Cancelled".
 */
export async function closeSteps(conversation: Pick<Conversation, '_id' | 'steps'>, reason: string, which: (index: number) => boolean = () => true): Promise<void> {
  const $set = closingFields(conversation, reason, which);
  if (Object.keys($set).length) await ConversationModel.updateOne({ _id: conversation._id }, asChange({ $set }));
}

/** Cancelled with no workflow left to do it (terminated by hand, Temporal's data reset): closed as the workflow would have. */
export async function cancelWithoutWorkflow(conversation: Pick<Conversation, '_id' | 'steps'>): Promise<void> {
  await ConversationModel.updateOne(
    { _id: conversation._id, status: { $in: ACTIVE_CONVERSATION_STATUSES } },
    asChange({ $set: { ...closingFields(conversation, CANCELLED, () => true), status: 'cancelled', error: 'Cancelled', completed_at: new Date() } }),
  );
}

/** Who asked for a conversation's cancel, written before the cancel is passed on. */
export async function recordCancelRequest(id: Id, by: Actor): Promise<void> {
  await ConversationModel.updateOne({ _id: id }, { $set: { cancelled_by: by } });
}

/** Why a cancelled conversation's open steps did not run. */
export const CANCELLED = 'Cancelled.';

/** The conversation's final status, with its one-line `error` (null when it completed). Only an active conversation ends. */
export async function finish(id: Id, status: ConversationStatus, error: string | null): Promise<boolean> {
  return inTransaction(async (session) => {
    const ended = await ConversationModel.updateOne({ _id: id, status: { $in: ACTIVE_CONVERSATION_STATUSES } }, asChange({ $set: { status, error, completed_at: new Date() } }), { session });
    if (ended.modifiedCount) await recordConversationEvent(id, 'conversation.finished', session);
    return ended.modifiedCount > 0;
  });
}
