import { io, type Socket } from 'socket.io-client';
import { get } from './api';
import type {
  ClientToServerEvents,
  Conversation,
  ConversationStepUpdatedEvent,
  ConversationUpdatedEvent,
  DeploymentRunUpdatedEvent,
  Run,
  ServerToClientEvents,
} from './api-types';

/** How much output a step has streamed, as the last event said (the page reads the text from the step's whole log). */
export type Streamed = { streamed?: number };

type PageSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

let socket: PageSocket | null = null;
let sessionEnded: (message: string) => void = () => undefined;

export const whenSessionEnded = (handler: (message: string) => void) => {
  sessionEnded = handler;
};

/**
 * The page's one socket, authenticated by the session cookie (same origin); open on every page while
 * signed in, so a sign-out elsewhere or a revoked token ends the page at once.
 */
export function pageSocket(): PageSocket {
  if (socket) return socket;
  socket = io({ transports: ['websocket'] });
  socket.on('session_ended', ({ message }) => sessionEnded(message));
  socket.on('connect_error', (error) => {
    if ((error as Error & { data?: { code?: string } }).data?.code === 'unauthorized') sessionEnded('The console session has ended: sign in again');
  });
  return socket;
}

export function closeSocket() {
  socket?.close();
  socket = null;
}

/** What a watcher's event handlers work with: the value shown, how to show a new one, how to read it again. */
interface Shown<T> {
  current: T;
  show(next: T): void;
  reread(): void;
}

type Handlers<T> = { [E in keyof ServerToClientEvents]?: (shown: Shown<T>, ...args: Parameters<ServerToClientEvents[E]>) => void };

/**
 * Something kept current over the page's socket: its snapshot when subscribed (again on every
 * reconnect), then its events as `handlers` apply them; read again over HTTP when a handler doubts
 * (a gap in `seq`…) or the tab comes back into view, so what the page shows is never behind what is stored.
 */
function keepCurrent<T>(
  {
    read,
    subscribe,
    unsubscribe,
    handlers,
  }: {
    read: () => Promise<T>;
    subscribe: (socket: PageSocket, snapshot: (value: T) => void, fail: (error: Error) => void) => void;
    unsubscribe: (socket: PageSocket) => void;
    handlers: Handlers<T>;
  },
  onValue: (value: T) => void,
  onError: (error: Error) => void,
): () => void {
  const s = pageSocket();
  let current: T | null = null;
  let stopped = false;
  let reading: Promise<void> | null = null;
  /** Events that came before the first snapshot (the server may send them before its answer): applied on top of it. */
  const early: Array<() => void> = [];

  const show = (next: T) => {
    if (stopped) return;
    current = next;
    onValue(next);
    for (const apply of early.splice(0)) apply();
  };
  const reread = () => {
    reading ??= read()
      .then(show)
      .catch(onError)
      .finally(() => {
        reading = null;
      });
  };
  const onConnect = () => subscribe(s, show, (error) => !stopped && onError(error));
  const listeners = Object.entries(handlers).map(([event, handle]) => {
    const listener = (...args: unknown[]) => {
      if (stopped) return;
      const apply = () => (handle as (shown: Shown<T>, ...rest: unknown[]) => void)({ current: current!, show, reread }, ...args);
      if (current === null) early.push(apply);
      else apply();
    };
    s.on(event as keyof ServerToClientEvents, listener as never);
    return [event, listener] as const;
  });
  const onVisible = () => {
    if (document.visibilityState === 'visible') reread();
  };
  s.on('connect', onConnect);
  document.addEventListener('visibilitychange', onVisible);
  if (s.connected) onConnect();
  return () => {
    stopped = true;
    for (const [event, listener] of listeners) s.off(event as keyof ServerToClientEvents, listener as never);
    s.off('connect', onConnect);
    document.removeEventListener('visibilitychange', onVisible);
    if (s.connected) unsubscribe(s);
  };
}

/**
 * A run kept current: its snapshot, then its events applied in order; read again on a gap in `seq`.
 * A fleet run's target events update its grid (each target has its own `seq`).
 */
export function watchRun(deploymentId: string, runId: string, onRun: (run: Run) => void, onError: (error: Error) => void): () => void {
  return keepCurrent<Run>(
    {
      read: () => get<Run>(`/api/v1/deployments/${deploymentId}/runs/${runId}`),
      subscribe: (s, snapshot, fail) =>
        s.emit('subscribe', { run_id: runId }, (answer) => (answer.ok ? snapshot(answer.data.run as Run) : fail(new Error(answer.error.message)))),
      unsubscribe: (s) => s.emit('unsubscribe', { run_id: runId }),
      handlers: {
        DeploymentRunUpdated: ({ current: run, show, reread }, event: DeploymentRunUpdatedEvent) => {
          if (event.run_id !== runId) return;
          if (event.target) {
            const changed = event.target;
            const targets = run.targets.map((t) => (t.server_id === changed.server_id && changed.seq > t.seq ? ({ ...t, ...changed } as Run['targets'][number]) : t));
            // The summary counts the targets: counted again from them.
            const summary = { total: targets.length, success: 0, failed: 0, running: 0, queued: 0, skipped: 0, cancelled: 0 };
            for (const t of targets) summary[t.status] += 1;
            return show({ ...run, targets, summary });
          }
          if (event.seq === null || event.seq <= run.seq) return;
          if (event.seq !== run.seq + 1) return reread();
          // The step's output itself is read from its whole log (components/whole-log.tsx): here only how far it went.
          const steps = run.steps.map((step, index) => {
            const state = event.steps[index];
            const streamed = event.output && event.output.step === index ? event.output.offset + event.output.data.length : (step as Streamed).streamed;
            return { ...step, ...(state ?? {}), streamed } as Run['steps'][number];
          });
          show({
            ...run,
            seq: event.seq,
            status: (event.status ?? run.status) as Run['status'],
            started_at: event.started_at ?? run.started_at,
            completed_at: event.completed_at ?? run.completed_at,
            error: event.error,
            steps,
          });
        },
      },
    },
    onRun,
    onError,
  );
}

/**
 * Whether an event of a conversation continues what is shown: the same change (one change may touch
 * several steps: they share a `seq`) or the next one. A gap: read again.
 */
function follows({ current, reread }: Shown<Conversation>, seq: number) {
  if (seq < current.seq) return false;
  if (seq > current.seq + 1) {
    reread();
    return false;
  }
  return true;
}

/**
 * A conversation kept current, like a run. A step event carries the step whole; a step not yet known
 * (a follow-up's plan) makes it read again.
 */
export function watchConversation(conversationId: string, onConversation: (conversation: Conversation) => void, onError: (error: Error) => void): () => void {
  return keepCurrent<Conversation>(
    {
      read: () => get<Conversation>(`/api/v1/conversations/${conversationId}`),
      subscribe: (s, snapshot, fail) =>
        s.emit('subscribe_conversation', { conversation_id: conversationId }, (answer) =>
          answer.ok ? snapshot(answer.data.conversation as Conversation) : fail(new Error(answer.error.message)),
        ),
      unsubscribe: (s) => s.emit('unsubscribe_conversation', { conversation_id: conversationId }),
      handlers: {
        ConversationStepUpdated: (shown, event: ConversationStepUpdatedEvent) => {
          if (event.conversation_id !== conversationId || !follows(shown, event.seq)) return;
          const { current, show, reread } = shown;
          if (!current.steps.some((step) => step.id === event.step.id)) return reread();
          show({
            ...current,
            seq: event.seq,
            status: event.conversation_status as Conversation['status'],
            steps: current.steps.map((step) =>
              step.id === event.step.id
                ? ({ ...event.step, streamed: event.chunk ? event.chunk.offset + event.chunk.data.length : (step as Streamed).streamed } as Conversation['steps'][number])
                : step,
            ),
          });
        },
        ConversationUpdated: (shown, event: ConversationUpdatedEvent) => {
          if (event.conversation_id !== conversationId || !follows(shown, event.seq)) return;
          shown.show({ ...shown.current, seq: event.seq, status: event.status as Conversation['status'], completed_at: event.completed_at, error: event.error });
        },
      },
    },
    onConversation,
    onError,
  );
}
