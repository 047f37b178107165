import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { RunReads } from '../deployments/run-reads';
import type { Logger } from '../../logger';
import { mayAtAll } from '../../domain/access/grants';
import { checkServersOf } from '../access/gate';
import { authenticateToken, type Principal, type Rejection } from '../../domain/tokens/service';
import { cookieValue, SESSION_COOKIE, sessionPrincipal } from '../http/auth';
import type { SessionLifetime } from '../../domain/sessions/store';
import type { Ack, ClientToServerEvents, ServerToClientEvents } from '../../domain/events';
import { conversationRoom, conversationStepRoom, runRoom } from '../../domain/events';
import { relayConversationChanges } from './conversation-relay';
import { relayRunChanges } from './relay';
import { endAtExpiry, endDisabledIdentities, endIfRevokedMeanwhile, endRevokedSessions, endSignedOutSessions } from './sessions';
import { ConversationModel, type Conversation } from '../../domain/conversations/model';
import { toConversationView } from '../conversations/views';
import type { Metrics } from '../observability/metrics';
import { countConversationChange, countRunChange } from '../observability/outcomes';

interface SocketData {
  principal: Principal;
  /** The console session the socket was opened with (none for a bearer token's). */
  sessionId?: string;
}

/** The handshake's Origin, when a browser sent one, names the host it was sent to. */
function sameOrigin(headers: { origin?: string; host?: string }): boolean {
  if (!headers.origin) return true;
  try {
    return new URL(headers.origin).host === headers.host;
  } catch {
    return false;
  }
}

const notFound = { ok: false as const, error: { code: 'not_found', message: 'Run not found' } };
const conversationNotFound = { ok: false as const, error: { code: 'not_found', message: 'Conversation not found' } };
const OBJECT_ID = /^[0-9a-f]{24}$/i;
/** Step ids one subscription may name. */
export const MAX_STEP_SUBSCRIPTIONS = 100;
/** Rooms one connection may be in (a run, a conversation, each step named): beyond, a subscription is refused. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 500;
/** Joining these rooms would take the socket past its subscriptions (socket.io also puts it in a room of its own id). */
const beyondLimit = (socket: { rooms: Set<string> }, rooms: string[], limit: number) =>
  socket.rooms.size - 1 + rooms.filter((room) => !socket.rooms.has(room)).length > limit;

type BosunServerSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;

/**
 * How a subscription is answered: through the client's acknowledgement callback when it gave one;
 * without one, the subscription still happens and a refusal arrives as a `subscription_error` event,
 * so a client that asks no acknowledgement still gets its events, or is told why not.
 */
function answerer<T>(socket: BosunServerSocket, event: 'subscribe' | 'subscribe_conversation', request: unknown, ack: Ack<T> | undefined): Ack<T> {
  if (typeof ack === 'function') return ack;
  return (answer) => {
    if (!answer.ok) socket.emit('subscription_error', { event, request, error: answer.error });
  };
}

/**
 * Socket.IO on the API's HTTP server. The handshake carries the same bearer token as HTTP
 * (`auth: { token }`), or a console page's session cookie; a client subscribes to runs of its own organization only. The relays'
 * change streams also feed the metrics of finished runs, conversations and steps. A subscription's
 * snapshot of a run is read by `runs`, as GET reads it.
 */
export function attachRealtime(
  httpServer: HttpServer,
  log: Logger,
  metrics: Metrics,
  sessions: SessionLifetime,
  runs: Pick<RunReads, 'runOf'>,
  { subscriptionsPerConnection = MAX_SUBSCRIPTIONS_PER_CONNECTION } = {},
) {
  const tooManySubscriptions = {
    ok: false as const,
    error: { code: 'rate_limited', message: `At most ${subscriptionsPerConnection} subscriptions per connection: unsubscribe from some first` },
  };
  const io = new Server<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>(httpServer, {
    serveClient: false,
  });

  io.use(async (socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown })?.token;
    const secret = token === undefined ? cookieValue(socket.handshake.headers.cookie, SESSION_COOKIE) : undefined;
    let principal: Principal | Rejection | 'ended' | null = null;
    if (secret) {
      // A page's socket: only from the page's own origin (the cookie would not come from another site, but say so).
      if (!sameOrigin(socket.handshake.headers)) return next(Object.assign(new Error('forbidden'), { data: { code: 'forbidden', message: 'A console socket must come from the console’s own origin' } }));
      const found = await sessionPrincipal(secret, sessions).catch(() => null);
      if (found && typeof found === 'object') socket.data.sessionId = found.session._id.toString();
      principal = found && typeof found === 'object' ? found.principal : found;
    } else if (typeof token === 'string') principal = await authenticateToken(token).catch(() => null);
    if (principal === 'disabled') return next(Object.assign(new Error('unauthorized'), { data: { code: 'unauthorized', message: 'The identity of this token is disabled' } }));
    if (principal === 'expired') return next(Object.assign(new Error('unauthorized'), { data: { code: 'unauthorized', message: 'The token has expired' } }));
    if (principal === 'ended') return next(Object.assign(new Error('unauthorized'), { data: { code: 'unauthorized', message: 'The console session has ended: sign in again' } }));
    if (!principal || principal === 'unknown') return next(Object.assign(new Error('unauthorized'), { data: { code: 'unauthorized', message: 'Send a valid API token as auth.token' } }));
    if (!mayAtAll(principal, 'read')) return next(Object.assign(new Error('forbidden'), { data: { code: 'forbidden', message: 'This identity or token may not read' } }));
    socket.data.principal = principal;
    next();
  });

  io.on('connection', (socket) => {
    endAtExpiry(socket);
    void endIfRevokedMeanwhile(socket).catch((err) => log.warn({ err }, 'could not check the token of a new socket'));
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
  });

  const untrackClients = metrics.trackSocketClients(() => io.of('/').sockets.size);
  const relay = relayRunChanges((event) => io.to(runRoom(event.run_id)).emit('DeploymentRunUpdated', event), log, countRunChange(metrics));
  const conversations = relayConversationChanges(
    {
      step: (event) => io.to([conversationRoom(event.conversation_id), conversationStepRoom(event.step.id)]).emit('ConversationStepUpdated', event),
      conversation: (event) => io.to(conversationRoom(event.conversation_id)).emit('ConversationUpdated', event),
    },
    log,
    countConversationChange(metrics),
  );
  const revocations = endRevokedSessions(io, log);
  const signOuts = endSignedOutSessions(io, log);
  const disablings = endDisabledIdentities(io, log);

  return {
    io,
    async close() {
      untrackClients();
      await revocations.close();
      await signOuts.close();
      await disablings.close();
      await relay.close();
      await conversations.close();
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}
