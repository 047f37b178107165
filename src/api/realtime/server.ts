import type { Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import type { RunReads } from '../deployments/run-reads';
import type { Logger } from '../../logger';
import type { SessionLifetime } from '../../domain/sessions/store';
import type { ClientToServerEvents, ServerToClientEvents } from '../../domain/events';
import { conversationRoom, conversationStepRoom, organizationRoom, pipelineRunRoom, runRoom } from '../../domain/events';
import { conversationRelay } from './conversation-relay';
import { runRelay } from './relay';
import { pipelineRunRelay } from './pipeline-relay';
import { configRelay } from './config-relay';
import { servePipelineSubscriptions } from './pipeline-subscriptions';
import { endAtExpiry, endIfRevokedMeanwhile, sessionEndsListener } from './sessions';
import { socketHandshake, type SocketData } from './handshake';
import { MAX_SUBSCRIPTIONS_PER_CONNECTION, serveSubscriptions } from './subscriptions';
import type { Metrics } from '../observability/metrics';
import { countConversationChange, countRunChange } from '../observability/outcomes';

/**
 * Socket.IO on the API's HTTP server. The handshake carries the same bearer token as HTTP
 * (`auth: { token }`), or a console page's session cookie (handshake.ts); a client subscribes to
 * runs, conversations and pipeline runs of its own organization only (subscriptions.ts, pipeline-subscriptions.ts). The relays (listeners of the
 * API's one change stream) also feed the metrics of finished runs, conversations and steps. A subscription's snapshot of a run
 * is read by `runs`, as GET reads it.
 */
export function attachRealtime(
  httpServer: HttpServer,
  log: Logger,
  metrics: Metrics,
  sessions: SessionLifetime,
  runs: Pick<RunReads, 'runOf'>,
  { subscriptionsPerConnection = MAX_SUBSCRIPTIONS_PER_CONNECTION } = {},
) {
  const io = new Server<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>(httpServer, {
    serveClient: false,
  });

  io.use(socketHandshake(sessions));

  io.on('connection', (socket) => {
    endAtExpiry(socket);
    void endIfRevokedMeanwhile(socket).catch((err) => log.warn({ err }, 'could not check the token of a new socket'));
    serveSubscriptions(socket, { runs, log, subscriptionsPerConnection });
    servePipelineSubscriptions(socket, { log, subscriptionsPerConnection });
    // Every socket hears that its organization's runs changed (no more than that: it re-reads what it may see).
    void socket.join(organizationRoom(socket.data.principal.organizationId));
  });

  const untrackClients = metrics.trackSocketClients(() => io.of('/').sockets.size);
  const runEvents = runRelay(
    (event) => io.to(runRoom(event.run_id)).emit('DeploymentRunUpdated', event),
    countRunChange(metrics),
    (organizationId) => io.to(organizationRoom(organizationId)).emit('RunsChanged', {}),
  );
  const conversations = conversationRelay(
    {
      step: (event) => io.to([conversationRoom(event.conversation_id), conversationStepRoom(event.step.id)]).emit('ConversationStepUpdated', event),
      conversation: (event) => io.to(conversationRoom(event.conversation_id)).emit('ConversationUpdated', event),
    },
    countConversationChange(metrics),
  );

  const pipelineRuns = pipelineRunRelay((event) => io.to(pipelineRunRoom(event.pipeline_run_id)).emit('PipelineRunUpdated', event), log);
  // Like RunsChanged, it names nothing: each page re-reads what it shows, which the gate filters.
  const config = configRelay((organizationId) => io.to(organizationRoom(organizationId)).emit('ConfigChanged', {}));

  return {
    io,
    /** What relays runs', conversations' and config's changes to this API's sockets, and ends them when a session ends elsewhere: the caller listens for them (src/roles/api.ts). */
    listeners: [runEvents, conversations, pipelineRuns, ...config, sessionEndsListener(io)],
    async close() {
      untrackClients();
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}
