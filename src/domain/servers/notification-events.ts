import type { ClientSession, Types } from 'mongoose';
import { recordNotificationEvent } from '../notifications/event-outbox';
import { ServerModel } from './model';

/* A server's notification events, as its store transitions record them (in their transactions). */

type Id = string | Types.ObjectId;

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
