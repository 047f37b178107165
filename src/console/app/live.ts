import { io, type Socket } from 'socket.io-client';
import { get } from './api';
import { FINISHED } from './api-types';
import { followRun } from '../../domain/follow-run';
import type {
  ClientToServerEvents,
  Conversation,
  ConversationStepUpdatedEvent,
  ConversationUpdatedEvent,
  DeploymentRunUpdatedEvent,
  PipelineRun,
  PipelineRunUpdatedEvent,
  Run,
  ServerToClientEvents,
} from './api-types';

/** How much output a step has streamed, as the last event said (the page reads the text from the step's whole log). */
export type Streamed = { streamed?: number };

export type PageSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

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
 * A read asked for while one is on its way is made again after it: the one on its way may have been
 * answered before the change that asked.
 */
function keepCurrent<T>(
  {
    read,
    subscribe,
    unsubscribe,
    take = (value) => value,
    handlers,
    socket: given,
  }: {
    read: () => Promise<T>;
    subscribe: (socket: PageSocket, snapshot: (value: T) => void, fail: (error: Error) => void) => void;
    unsubscribe: (socket: PageSocket) => void;
    /** What a snapshot or a re-read makes of what is shown (`shown`; by default: it replaces it). */
    take?: (value: T, shown: T | null) => T;
    handlers: Handlers<T>;
    /** The page's socket unless given. */
    socket?: PageSocket;
  },
  onValue: (value: T) => void,
  onError: (error: Error) => void,
): () => void {
  const s = given ?? pageSocket();
  let current: T | null = null;
  let stopped = false;
  let reading: Promise<void> | null = null;
  let readAgain = false;
  /** Events that came before the first snapshot (the server may send them before its answer): applied on top of it. */
  const early: Array<() => void> = [];

  const show = (next: T) => {
    if (stopped) return;
    current = next;
    onValue(next);
    for (const apply of early.splice(0)) apply();
  };
  const snapshot = (value: T) => show(take(value, current));
  const reread = (): void => {
    if (reading) {
      readAgain = true;
      return;
    }
    reading = read()
      .then(snapshot)
      .catch(onError)
      .finally(() => {
        reading = null;
        if (!readAgain || stopped) return;
        readAgain = false;
        reread();
      });
  };
  const onConnect = () => subscribe(s, snapshot, (error) => !stopped && onError(error));
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
 * A run kept current: its snapshot, then its events applied as the shared protocol says
 * (src/domain/follow-run.ts: in `seq` order, a fleet target's by its own, the summary counted
 * again); read again on a gap. A one-server run's steps also say how far their output went.
 */
export function watchRun(deploymentId: string, runId: string, onRun: (run: Run) => void, onError: (error: Error) => void): () => void {
  const follower = followRun<Run>(runId);
  // How much output each step streamed since the last snapshot (the page reads the text from the step's whole log).
  const streamed = new Map<number, number>();
  const shown = () => {
    const run = follower.run!;
    return streamed.size ? { ...run, steps: run.steps.map((step, index) => ({ ...step, streamed: streamed.get(index) })) } : run;
  };
  return keepCurrent<Run>(
    {
      read: () => get<Run>(`/api/v1/deployments/${deploymentId}/runs/${runId}`),
      subscribe: (s, snapshot, fail) =>
        s.emit('subscribe', { run_id: runId }, (answer) => (answer.ok ? snapshot(answer.data.run as Run) : fail(new Error(answer.error.message)))),
      unsubscribe: (s) => s.emit('unsubscribe', { run_id: runId }),
      take: (run) => {
        streamed.clear();
        follower.take(run);
        return shown();
      },
      handlers: {
        DeploymentRunUpdated: ({ show, reread }, event: DeploymentRunUpdatedEvent) => {
          const before = follower.run?.status;
          const outcome = follower.apply(event);
          if (outcome === 'ignored' || outcome === 'held') return;
          if (event.output && !event.target) streamed.set(event.output.step, event.output.offset + event.output.data.length);
          show(shown());
          // A rollback's end: each target's own rollback is read with the run; a gate that opens, with who may approve it.
          const gateOpened = event.status === 'awaiting_approval' && before !== 'awaiting_approval';
          if (outcome === 'gap' || gateOpened || (event.rollback && event.rollback.status !== 'running')) reread();
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

/** A read or snapshot older than what is shown (by `seq`: answered before an event the page applied meanwhile) is dropped. */
const notOlder = <T extends { seq: number }>(value: T, shown: T | null): T => (shown && value.seq < shown.seq ? shown : value);

/**
 * A conversation kept current, like a run. A step event carries the step whole; a step not yet known
 * (a follow-up's plan) makes it read again.
 */
export function watchConversation(conversationId: string, onConversation: (conversation: Conversation) => void, onError: (error: Error) => void, socket?: PageSocket): () => void {
  return keepCurrent<Conversation>(
    {
      socket,
      read: () => get<Conversation>(`/api/v1/conversations/${conversationId}`),
      take: notOlder,
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
        ConversationUpdated: (page, event: ConversationUpdatedEvent) => {
          if (event.conversation_id !== conversationId || !follows(page, event.seq)) return;
          page.show({ ...page.current, seq: event.seq, status: event.status as Conversation['status'], completed_at: event.completed_at, error: event.error });
        },
      },
    },
    onConversation,
    onError,
  );
}

/**
 * A pipeline run kept current: its snapshot, then each PipelineRunUpdated event, which carries the
 * whole run (a later `seq` replaces what is shown). Its stages' deployment runs changing status alone
 * is no change of it (docs/events.md): the organization's RunsChanged makes an unfinished run read
 * again, so each stage's `deployment_run_status` follows; a read older than what is shown is dropped.
 */
export function watchPipelineRun(pipelineId: string, runId: string, onRun: (run: PipelineRun) => void, onError: (error: Error) => void): () => void {
  return keepCurrent<PipelineRun>(
    {
      read: () => get<PipelineRun>(`/api/v1/pipelines/${pipelineId}/runs/${runId}`),
      subscribe: (s, snapshot, fail) =>
        s.emit('subscribe_pipeline_run', { pipeline_run_id: runId }, (answer) => (answer.ok ? snapshot(answer.data.run as PipelineRun) : fail(new Error(answer.error.message)))),
      unsubscribe: (s) => s.emit('unsubscribe_pipeline_run', { pipeline_run_id: runId }),
      take: notOlder,
      handlers: {
        PipelineRunUpdated: ({ current, show }, event: PipelineRunUpdatedEvent) => {
          if (event.pipeline_run_id === runId && event.seq > current.seq) show(event.run as PipelineRun);
        },
        RunsChanged: ({ current, reread }) => {
          if (!FINISHED.has(current.status)) reread();
        },
      },
    },
    onRun,
    onError,
  );
}
