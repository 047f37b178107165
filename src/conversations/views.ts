import type { Conversation, ConversationStep } from './model';
import { iso } from '../http/timestamps';

export const toConversationListView = (c: Conversation) => ({
  id: c._id.toString(),
  chatable_type: c.chatable_type,
  chatable_id: c.chatable_id.toString(),
  server_id: c.server_id.toString(),
  status: c.status,
  created_at: iso(c.createdAt),
});

/** A step as GET and the live events show it. */
export const toStepView = (s: ConversationStep) => ({
  id: s._id.toString(),
  status: s.status,
  execution_success: s.execution_success ?? null,
  execution_log: s.output ?? '',
  created_at: iso(s.created_at),
  title: s.title,
  command: s.command,
  target: s.target,
  server_id: s.server_id?.toString() ?? null,
  transfer: s.transfer
    ? { kind: s.transfer.kind, source_server_id: s.source_server_id?.toString() ?? null, from: s.transfer.from ?? null, to: s.transfer.to ?? null, source_command: s.transfer.source_command ?? null, target_command: s.transfer.target_command ?? null }
    : null,
  risk: s.risk,
  message_id: s.message_id.toString(),
  exit_code: s.exit_code ?? null,
  approval: s.approval ? { decision: s.approval.decision ?? null, decided_by: s.approval.decided_by ?? null, decided_at: iso(s.approval.decided_at) } : null,
  started_at: iso(s.started_at),
  completed_at: iso(s.completed_at),
});

export const toConversationView = (c: Conversation) => ({
  ...toConversationListView(c),
  source_server_id: c.source_server_id?.toString() ?? null,
  require_approval: c.require_approval ?? false,
  created_by: `API token: ${c.created_by}`,
  completed_at: iso(c.completed_at),
  error: c.error ?? null,
  seq: c.seq,
  messages: c.messages.map((m) => ({ id: m._id.toString(), text: m.text, planned: m.planned, created_at: iso(m.created_at) })),
  steps: (c.steps as ConversationStep[]).map(toStepView),
});
