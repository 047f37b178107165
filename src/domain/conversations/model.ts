import { actorSchema } from '../access/actor';
import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { executionFields, lastChunkField } from '../execution/fields';
import { RISKS } from '../planner/types';

export { CONVERSATION_STATUSES, FINAL_CONVERSATION_STATUSES, CONVERSATION_STEP_STATUSES } from './statuses';
export type { ConversationStatus } from './statuses';
import { CONVERSATION_STATUSES, CONVERSATION_STEP_STATUSES } from './statuses';
/** Steps a conversation may hold, follow-ups included; then start a new conversation. */
export const MAX_CONVERSATION_STEPS = 100;
export const CHATABLE_TYPES = ['server', 'migration_plan'] as const;
export type ChatableType = (typeof CHATABLE_TYPES)[number];

const messageSchema = new Schema({
  text: { type: String, required: true },
  sent_by: { type: String, required: true },
  // Commands to run as they are, one step each, instead of planning `text` (which then says why).
  commands: { type: [String], default: undefined },
  // Turned into steps (or found unplannable) by the conversation's workflow.
  planned: { type: Boolean, default: false },
  created_at: { type: Date, required: true },
});

const approvalSchema = new Schema(
  {
    decision: { type: String, enum: ['approved', 'rejected', null], default: null },
    decided_by: { type: String, default: null },
    decided_at: { type: Date, default: null },
  },
  { _id: false },
);

/** A step that moves data between a migration plan's servers (see Transfer in the planner's types). */
const transferSchema = new Schema(
  {
    kind: { type: String, enum: ['copy', 'pipe', 'compare'], required: true },
    from: { type: String, default: null },
    to: { type: String, default: null },
    source_command: { type: String, default: null },
    target_command: { type: String, default: null },
  },
  { _id: false },
);

const conversationStepSchema = new Schema({
  message_id: { type: Schema.Types.ObjectId, required: true },
  title: { type: String, required: true },
  command: { type: String, default: '' },
  target: { type: String, enum: ['server', 'source', 'target'], required: true },
  server_id: { type: Schema.Types.ObjectId, ref: 'Server', default: null },
  // A transfer reads from the plan's source server and writes to (or compares with) server_id, its target.
  transfer: { type: transferSchema, default: null },
  source_server_id: { type: Schema.Types.ObjectId, ref: 'Server', default: null },
  // A step of a new plan made after that step failed (the planner was asked for another way).
  replan_of: { type: Schema.Types.ObjectId, default: null },
  risk: { type: String, enum: RISKS, required: true },
  status: { type: String, enum: CONVERSATION_STEP_STATUSES, required: true, default: 'pending' },
  execution_success: { type: Boolean, default: null },
  // The execution log is `output`; failure details end it.
  ...executionFields,
  // Null unless the step waits for a person's decision before it runs.
  approval: { type: approvalSchema, default: null },
  // Set when the policy refused the command: the step never runs.
  refused: { type: String, default: null },
  created_at: { type: Date, required: true },
});

const conversationSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    chatable_type: { type: String, enum: CHATABLE_TYPES, required: true },
    chatable_id: { type: Schema.Types.ObjectId, required: true },
    // The server, or for a migration plan its target server.
    server_id: { type: Schema.Types.ObjectId, ref: 'Server', required: true },
    source_server_id: { type: Schema.Types.ObjectId, ref: 'Server', default: null },
    status: { type: String, enum: CONVERSATION_STATUSES, required: true, default: 'running' },
    require_approval: { type: Boolean, default: false },
    // Started by an AI agent (a service account marked as one, or through the MCP door): its change and destructive steps wait for a person.
    agent: { type: Boolean, default: false },
    created_by: { type: String, required: true },
    // The identity and token that started it (null on conversations of an older version).
    actor: { type: actorSchema, default: null },
    // Who asked for its cancel.
    cancelled_by: { type: actorSchema, default: null },
    messages: { type: [messageSchema], default: [] },
    steps: { type: [conversationStepSchema], default: [] },
    error: { type: String, default: null },
    completed_at: { type: Date, default: null },
    // Bumped by every persisted change: the sequence number of live events.
    seq: { type: Number, required: true, default: 0 },
    last_chunk: lastChunkField,
  },
  { timestamps: true },
);
conversationSchema.index({ organization_id: 1, createdAt: -1, _id: -1 });
conversationSchema.index({ organization_id: 1, chatable_type: 1, chatable_id: 1, createdAt: -1 });
// A server's latest conversations, as the server or as a migration's source (its page's activity).
conversationSchema.index({ server_id: 1, createdAt: -1 });
conversationSchema.index({ source_server_id: 1, createdAt: -1 }, { partialFilterExpression: { source_server_id: { $type: 'objectId' } } });

export type Conversation = InferSchemaType<typeof conversationSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type ConversationStep = Conversation['steps'][number] & { _id: Types.ObjectId };
export const ConversationModel = model('Conversation', conversationSchema);
