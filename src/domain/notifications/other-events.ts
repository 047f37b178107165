import type { ClientSession, Types } from 'mongoose';
import { actorView } from '../access/actor';
import { ConversationModel } from '../conversations/model';
import { ServerModel } from '../servers/model';
import { recordNotificationEvent, type EventType } from './event-outbox';

/* Conversations', servers' and schedules' events, as their store transitions record them (in their transactions). */

type Id = string | Types.ObjectId;

export async function recordConversationEvent(conversationId: Id, type: Extract<EventType, `conversation.${string}`>, session: ClientSession): Promise<void> {
  const conversation = await ConversationModel.findById(conversationId, { organization_id: 1, server_id: 1, status: 1, error: 1, actor: 1, created_by: 1, 'messages.text': 1, 'steps.title': 1, 'steps.status': 1, 'steps.approval': 1 })
    .session(session)
    .lean();
  if (!conversation) return;
  const server = await ServerModel.findById(conversation.server_id, { title: 1, tags: 1 }).session(session).lean();
  const id = conversation._id.toString();
  const waiting = conversation.steps.find((s) => s.status === 'pending' && s.approval && !s.approval.decision);
  await recordNotificationEvent(
    {
      organizationId: conversation.organization_id,
      type,
      subject: { kind: 'conversation', id },
      serverIds: [conversation.server_id],
      tags: (server?.tags as string[] | undefined) ?? [],
      payload: {
        summary: type === 'conversation.finished' ? `Conversation on ${server?.title ?? 'a server'} ended ${conversation.status}${conversation.error ? `: ${conversation.error}` : ''}` : `Conversation on ${server?.title ?? 'a server'} is waiting for approval${waiting ? `: ${waiting.title}` : ''}`,
        conversation: { id, status: conversation.status, error: conversation.error ?? null, actor: actorView(conversation.actor), server: { id: conversation.server_id.toString(), title: server?.title ?? null }, waiting_step: waiting ? waiting.title : null },
        console_path: `/conversations/${id}`,
      },
    },
    { session },
  );
}

export async function recordServerEvent(serverId: Id, type: 'server.offline' | 'server.host_key_changed', reason: string | null, session: ClientSession): Promise<void> {
  const server = await ServerModel.findById(serverId, { organization_id: 1, title: 1, host: 1, tags: 1, status: 1 }).session(session).lean();
  if (!server) return;
  const id = server._id.toString();
  await recordNotificationEvent(
    {
      organizationId: server.organization_id,
      type,
      subject: { kind: 'server', id },
      serverIds: [server._id],
      tags: (server.tags as string[] | undefined) ?? [],
      payload: {
        summary: type === 'server.offline' ? `Server ${server.title} is offline` : `Server ${server.title} presented a different host key: no longer trusted until verified again`,
        server: { id, title: server.title, host: server.host, status: server.status, reason },
        console_path: `/servers/${id}`,
      },
    },
    { session },
  );
}

export interface SkippedTick {
  organizationId: Id;
  scheduleId: Id;
  scheduleName: string;
  deploymentId: Id;
  scheduledAt: Date;
  outcome: string;
  message: string | null;
}

export async function recordTickSkipped(tick: SkippedTick, session: ClientSession): Promise<void> {
  const id = String(tick.scheduleId);
  await recordNotificationEvent(
    {
      organizationId: tick.organizationId,
      type: 'schedule.tick_skipped',
      subject: { kind: 'schedule', id },
      deploymentId: tick.deploymentId,
      payload: {
        summary: `Schedule ${tick.scheduleName}: the tick of ${tick.scheduledAt.toISOString()} did not run (${tick.outcome}${tick.message ? `: ${tick.message}` : ''})`,
        schedule: { id, name: tick.scheduleName, deployment_id: String(tick.deploymentId), scheduled_at: tick.scheduledAt.toISOString(), outcome: tick.outcome, message: tick.message },
        console_path: `/deployments/${String(tick.deploymentId)}`,
      },
    },
    { session },
  );
}
