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

/**
 * A run kept current: its snapshot, then its events applied in order. A gap in `seq`, an output
 * chunk that does not follow what is shown, a reconnect, or the tab coming back into view: the run
 * is read again, so what the page shows is never behind what is stored.
 */
export function watchRun(deploymentId: string, runId: string, onRun: (run: Run) => void, onError: (error: Error) => void): () => void {
  const s = pageSocket();
  let run: Run | null = null;
  let stopped = false;
  let reading: Promise<void> | null = null;

  const reread = () => {
    reading ??= get<Run>(`/api/v1/deployments/${deploymentId}/runs/${runId}`)
      .then((fresh) => {
        if (stopped) return;
        run = fresh;
        onRun(fresh);
      })
      .catch(onError)
      .finally(() => {
        reading = null;
      });
  };

  const subscribe = () => {
    s.emit('subscribe', { run_id: runId }, (answer) => {
      if (stopped) return;
      if (!answer.ok) return onError(new Error(answer.error.message));
      run = answer.data.run as Run;
      onRun(run);
    });
  };

  const onEvent = (event: DeploymentRunUpdatedEvent) => {
    if (stopped || event.run_id !== runId || !run) return;
    if (event.target) {
      const changed = event.target;
      const targets = run.targets.map((t) => (t.server_id === changed.server_id && changed.seq > t.seq ? ({ ...t, ...changed } as Run['targets'][number]) : t));
      // The summary counts the targets: counted again from them.
      const summary = { total: targets.length, success: 0, failed: 0, running: 0, queued: 0, skipped: 0, cancelled: 0 };
      for (const t of targets) summary[t.status] += 1;
      run = { ...run, targets, summary };
      onRun(run);
      return;
    }
    if (event.seq === null || event.seq <= run.seq) return;
    if (event.seq !== run.seq + 1) return reread();
    // The step's output itself is read from its whole log (components/whole-log.tsx): here only how far it went.
    const steps = run.steps.map((step, index) => {
      const state = event.steps[index];
      const streamed = event.output && event.output.step === index ? event.output.offset + event.output.data.length : (step as Streamed).streamed;
      return { ...step, ...(state ?? {}), streamed } as Run['steps'][number];
    });
    run = {
      ...run,
      seq: event.seq,
      status: (event.status ?? run.status) as Run['status'],
      started_at: event.started_at ?? run.started_at,
      completed_at: event.completed_at ?? run.completed_at,
      error: event.error,
      steps,
    };
    onRun(run);
  };

  const onVisible = () => {
    if (document.visibilityState === 'visible') reread();
  };
  s.on('DeploymentRunUpdated', onEvent);
  s.on('connect', subscribe);
  document.addEventListener('visibilitychange', onVisible);
  if (s.connected) subscribe();
  return () => {
    stopped = true;
    s.off('DeploymentRunUpdated', onEvent);
    s.off('connect', subscribe);
    document.removeEventListener('visibilitychange', onVisible);
    if (s.connected) s.emit('unsubscribe', { run_id: runId });
  };
}

/**
 * A conversation kept current, like a run: its snapshot, then its events. A step event carries the
 * step whole; one change may touch several steps (they share a `seq`). A gap in `seq`, a step not
 * yet known (a follow-up's plan), a reconnect or the tab coming back: the conversation is read again.
 */
export function watchConversation(conversationId: string, onConversation: (conversation: Conversation) => void, onError: (error: Error) => void): () => void {
  const s = pageSocket();
  let conversation: Conversation | null = null;
  let stopped = false;
  let reading: Promise<void> | null = null;

  const show = (next: Conversation) => {
    conversation = next;
    onConversation(next);
  };
  const reread = () => {
    reading ??= get<Conversation>(`/api/v1/conversations/${conversationId}`)
      .then((fresh) => {
        if (!stopped) show(fresh);
      })
      .catch(onError)
      .finally(() => {
        reading = null;
      });
  };
  const subscribe = () => {
    s.emit('subscribe_conversation', { conversation_id: conversationId }, (answer) => {
      if (stopped) return;
      if (!answer.ok) return onError(new Error(answer.error.message));
      show(answer.data.conversation as Conversation);
    });
  };
  /** Whether an event continues what is shown: the same change (same seq) or the next one. */
  const follows = (seq: number) => {
    if (!conversation || seq < conversation.seq) return false;
    if (seq > conversation.seq + 1) {
      reread();
      return false;
    }
    return true;
  };
  const onStep = (event: ConversationStepUpdatedEvent) => {
    if (stopped || event.conversation_id !== conversationId || !follows(event.seq)) return;
    const current = conversation!;
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
  };
  const onUpdated = (event: ConversationUpdatedEvent) => {
    if (stopped || event.conversation_id !== conversationId || !follows(event.seq)) return;
    show({ ...conversation!, seq: event.seq, status: event.status as Conversation['status'], completed_at: event.completed_at, error: event.error });
  };
  const onVisible = () => {
    if (document.visibilityState === 'visible') reread();
  };
  s.on('ConversationStepUpdated', onStep);
  s.on('ConversationUpdated', onUpdated);
  s.on('connect', subscribe);
  document.addEventListener('visibilitychange', onVisible);
  if (s.connected) subscribe();
  return () => {
    stopped = true;
    s.off('ConversationStepUpdated', onStep);
    s.off('ConversationUpdated', onUpdated);
    s.off('connect', subscribe);
    document.removeEventListener('visibilitychange', onVisible);
    if (s.connected) s.emit('unsubscribe_conversation', { conversation_id: conversationId });
  };
}
