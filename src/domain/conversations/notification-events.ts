import type { ClientSession, Types } from 'mongoose';
import { actorView } from '../access/actor';
import { recordNotificationEvent, type EventType } from '../notifications/event-outbox';
import { ServerModel } from '../servers/model';
import { ConversationModel } from './model';

/* A conversation's notification events, as its store transitions record them (in their transactions). */

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
