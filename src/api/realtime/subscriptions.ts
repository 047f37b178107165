import type { Logger } from '../../logger';
import { ConversationModel, type Conversation } from '../../domain/conversations/model';
import { conversationRoom, conversationStepRoom, organizationRoom, runRoom, type Ack } from '../../domain/events';
import { checkServersOf } from '../access/gate';
import { toConversationView } from '../conversations/views';
import type { RunReads } from '../deployments/run-reads';
import type { BosunServerSocket } from './handshake';

type SubscriptionEvent = 'subscribe' | 'subscribe_conversation' | 'subscribe_pipeline_run';

/*
 * What a connected socket subscribes to: runs and conversations (or some of a conversation's steps)
 * its caller may read, each a room the relays emit to; at most so many rooms per connection.
 */

const notFound = { ok: false as const, error: { code: 'not_found', message: 'Run not found' } };
const conversationNotFound = { ok: false as const, error: { code: 'not_found', message: 'Conversation not found' } };
export const OBJECT_ID = /^[0-9a-f]{24}$/i;
/** The prefix of an organization's room. */
const ORGANIZATION_ROOM = organizationRoom('');
/** Step ids one subscription may name. */
export const MAX_STEP_SUBSCRIPTIONS = 100;
/** Rooms one connection may be in (a run, a conversation, each step named, a pipeline run): beyond, a subscription is refused. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 500;
/**
 * Joining these rooms would take the socket past its subscriptions: the rooms it subscribed to, not
 * the two every socket is in (socket.io's of its own id, and its organization's, for RunsChanged).
 */
export const beyondLimit = (socket: { id: string; rooms: Set<string> }, rooms: string[], limit: number) =>
  [...socket.rooms].filter((room) => room !== socket.id && !room.startsWith(ORGANIZATION_ROOM)).length + rooms.filter((room) => !socket.rooms.has(room)).length > limit;

/**
 * How a subscription is answered: through the client's acknowledgement callback when it gave one;
 * without one, the subscription still happens and a refusal arrives as a `subscription_error` event,
 * so a client that asks no acknowledgement still gets its events, or is told why not.
 */
export function answerer<T>(socket: BosunServerSocket, event: SubscriptionEvent, request: unknown, ack: Ack<T> | undefined): Ack<T> {
  if (typeof ack === 'function') return ack;
  return (answer) => {
    if (!answer.ok) socket.emit('subscription_error', { event, request, error: answer.error });
  };
}

/** A run's snapshot is read by `runs`, as GET reads it (the gate's answer included). */
export function serveSubscriptions(socket: BosunServerSocket, { runs, log, subscriptionsPerConnection }: { runs: Pick<RunReads, 'runOf'>; log: Logger; subscriptionsPerConnection: number }) {
  const tooManySubscriptions = {
    ok: false as const,
    error: { code: 'rate_limited', message: `At most ${subscriptionsPerConnection} subscriptions per connection: unsubscribe from some first` },
  };

  socket.on('subscribe', async (request, acknowledge) => {
    const ack = answerer(socket, 'subscribe', request, acknowledge);
    try {
      const runId = typeof request?.run_id === 'string' && OBJECT_ID.test(request.run_id) ? request.run_id : null;
      // Check ownership before joining: not even for a moment may another organization's events reach this socket.
      // Organization and grants alike: a run the caller may not read is none (checked again after joining).
      const principal = socket.data.principal;
      if (!runId || !(await runs.runOf(principal, runId))) return ack(notFound);
      if (beyondLimit(socket, [runRoom(runId)], subscriptionsPerConnection)) return ack(tooManySubscriptions);
      // Join, then read: an event between the two carries a seq the snapshot already covers, so none is lost.
      await socket.join(runRoom(runId));
      const run = await runs.runOf(principal, runId);
      if (!run) return ack(notFound);
      ack({ ok: true, data: { seq: run.seq, run } });
    } catch (err) {
      log.error({ err }, 'subscribe failed');
      ack({ ok: false, error: { code: 'internal_error', message: 'Could not subscribe; try again' } });
    }
  });
  socket.on('unsubscribe', async (request, ack) => {
    if (typeof request?.run_id === 'string') await socket.leave(runRoom(request.run_id));
    if (typeof ack === 'function') ack({ ok: true, data: null });
  });

  /** A conversation of the socket's organization on servers its identity may read, or null. */
  const ownConversation = async (id: string) => {
    const conversation = await ConversationModel.findOne({ _id: id, organization_id: socket.data.principal.organizationId }).lean<Conversation>();
    if (!conversation) return null;
    try {
      await checkServersOf(socket.data.principal, [conversation.server_id, conversation.source_server_id], 'Conversation');
      return conversation;
    } catch {
      return null;
    }
  };
  socket.on('subscribe_conversation', async (request, acknowledge) => {
    const ack = answerer(socket, 'subscribe_conversation', request, acknowledge);
    try {
      const id = typeof request?.conversation_id === 'string' && OBJECT_ID.test(request.conversation_id) ? request.conversation_id.toLowerCase() : null;
      const stepIds = request?.step_ids;
      if (stepIds !== undefined && (!Array.isArray(stepIds) || stepIds.length > MAX_STEP_SUBSCRIPTIONS || !stepIds.every((s) => typeof s === 'string' && OBJECT_ID.test(s)))) {
        return ack({ ok: false, error: { code: 'validation_failed', message: `step_ids must be a list of at most ${MAX_STEP_SUBSCRIPTIONS} step ids` } });
      }
      // Ownership first (and of the steps too): another organization's events never reach this socket.
      const existing = id ? await ownConversation(id) : null;
      const known = new Set((existing?.steps ?? []).map((s) => s._id.toString()));
      if (!existing || (stepIds && !stepIds.every((s) => known.has(s.toLowerCase())))) return ack(conversationNotFound);
      const rooms = stepIds ? stepIds.map((s) => conversationStepRoom(s.toLowerCase())) : [conversationRoom(id!)];
      if (beyondLimit(socket, rooms, subscriptionsPerConnection)) return ack(tooManySubscriptions);
      await socket.join(rooms);
      // Join, then read: an event between the two carries a seq the snapshot already covers.
      const conversation = await ownConversation(id!);
      if (!conversation) return ack(conversationNotFound);
      ack({ ok: true, data: { seq: conversation.seq, conversation: toConversationView(conversation) } });
    } catch (err) {
      log.error({ err }, 'subscribe_conversation failed');
      ack({ ok: false, error: { code: 'internal_error', message: 'Could not subscribe; try again' } });
    }
  });
  socket.on('unsubscribe_conversation', async (request, ack) => {
    const id = typeof request?.conversation_id === 'string' && OBJECT_ID.test(request.conversation_id) ? request.conversation_id.toLowerCase() : null;
    if (id) {
      await socket.leave(conversationRoom(id));
      const conversation = await ConversationModel.findById(id, { 'steps._id': 1 }).lean();
      for (const step of conversation?.steps ?? []) await socket.leave(conversationStepRoom(step._id.toString()));
    }
    if (typeof ack === 'function') ack({ ok: true, data: null });
  });
}
