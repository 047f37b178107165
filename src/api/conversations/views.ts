import { actorView, createdByText } from '../../domain/access/actor';
import { actorSchema } from '../access/views';
import { z } from 'zod';
import { toStepView } from '../../domain/conversations/events';
import type { Conversation, ConversationStep } from '../../domain/conversations/model';
import { CHATABLE_TYPES, CONVERSATION_STATUSES, CONVERSATION_STEP_STATUSES } from '../../domain/conversations/model';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { RISKS } from '../../domain/planner/types';
import { temporalUiUrlSchema } from '../../domain/temporal/ui-url-schema';

export const conversationListItemSchema = z
  .object({
    id: z.string(),
    chatable_type: z.enum(CHATABLE_TYPES),
    chatable_id: z.string(),
    server_id: z.string().describe('The server, or for a migration plan its target server'),
    status: z.enum(CONVERSATION_STATUSES),
    created_at: timestampSchema,
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'ConversationListItem' });

export const conversationStepSchema = z
  .object({
    id: z.string(),
    status: z.enum(CONVERSATION_STEP_STATUSES),
    execution_success: z.boolean().nullable(),
    execution_log: z.string().describe('Output as produced (head and tail kept), then failure details'),
    created_at: timestampSchema,
    title: z.string(),
    command: z.string(),
    target: z.enum(['server', 'source', 'target']),
    server_id: z.string().nullable(),
    transfer: z
      .object({
        kind: z.enum(['copy', 'pipe', 'compare']),
        source_server_id: z.string().nullable(),
        from: z.string().nullable(),
        to: z.string().nullable(),
        source_command: z.string().nullable(),
        target_command: z.string().nullable(),
      })
      .nullable()
      .describe('Set on a step that moves data between a migration plan’s servers'),
    risk: z.enum(RISKS),
    message_id: z.string(),
    exit_code: z.number().int().nullable(),
    approval: z
      .object({ decision: z.enum(['approved', 'rejected']).nullable(), decided_by: z.string().nullable(), decided_at: timestampSchema.nullable() })
      .nullable()
      .describe('Set on a step that waits for (or got) a person’s decision'),
    started_at: timestampSchema.nullable(),
    completed_at: timestampSchema.nullable(),
  })
  .meta({ id: 'ConversationStep' });

export const conversationSchema = conversationListItemSchema
  .extend({
    source_server_id: z.string().nullable(),
    require_approval: z.boolean(),
    agent: z.boolean().describe('Started by an AI agent: its change and destructive steps wait for a person (see the policy)'),
    created_by: z.string().describe('Who started it, as a run’s triggered_by reads: "API token: <token name>" with a bearer token, "alice (person)" from a console session; `actor` says which identity'),
    actor: actorSchema.nullable().describe('The identity that started it, and the token it used (null on conversations of a version before identities)'),
    cancelled_by: actorSchema.nullable().describe('Who asked for its cancel; null unless cancelled by a request'),
    completed_at: timestampSchema.nullable(),
    error: z.string().nullable(),
    seq: z.number().int().describe('The sequence number of the latest change, as in live events'),
    messages: z.array(z.object({ id: z.string(), text: z.string(), commands: z.array(z.string()).nullable().describe('Commands sent to run as they are (null: the text was planned)'), planned: z.boolean(), created_at: timestampSchema })),
    steps: z.array(conversationStepSchema),
  })
  .meta({ id: 'Conversation' });

/** What starting a conversation answers. */
export const conversationStartedSchema = z
  .object({ id: z.string(), status: z.enum(CONVERSATION_STATUSES), created_at: timestampSchema })
  .meta({ id: 'ConversationStarted' });

export const toConversationListView = (c: Conversation) => ({
  id: c._id.toString(),
  chatable_type: c.chatable_type,
  chatable_id: c.chatable_id.toString(),
  server_id: c.server_id.toString(),
  status: c.status,
  created_at: iso(c.createdAt),
});

/** A step as GET and the live events show it. */
export const toConversationView = (c: Conversation) => ({
  ...toConversationListView(c),
  source_server_id: c.source_server_id?.toString() ?? null,
  require_approval: c.require_approval ?? false,
  agent: c.agent ?? false,
  created_by: createdByText(c),
  actor: actorView(c.actor),
  cancelled_by: actorView(c.cancelled_by),
  completed_at: iso(c.completed_at),
  error: c.error ?? null,
  seq: c.seq,
  messages: c.messages.map((m) => ({ id: m._id.toString(), text: m.text, commands: m.commands?.length ? [...m.commands] : null, planned: m.planned, created_at: iso(m.created_at) })),
  steps: (c.steps as ConversationStep[]).map(toStepView),
});
