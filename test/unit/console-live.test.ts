import type { Conversation } from '../../src/console/app/api-types';
import { watchConversation, type PageSocket } from '../../src/console/app/live';

/*
 * The console's conversation page kept current (src/console/app/live.ts), its order of reads and
 * events played out by hand: the socket is a stand-in that answers the subscription and delivers the
 * events the test sends, the API's reads are answered when the test says. The browser test
 * (test/e2e/console.test.ts) runs the same code against the real API; this one makes the race it met
 * on a loaded machine happen every time.
 */
type Listener = (...args: unknown[]) => void;

function standInSocket(snapshot: Conversation) {
  const listeners = new Map<string, Listener[]>();
  const socket = {
    connected: true,
    on(event: string, listener: Listener) {
      listeners.set(event, [...(listeners.get(event) ?? []), listener]);
      return socket;
    },
    off(event: string, listener: Listener) {
      listeners.set(event, (listeners.get(event) ?? []).filter((l) => l !== listener));
      return socket;
    },
    emit(event: string, _payload: unknown, answer?: (reply: unknown) => void) {
      if (event === 'subscribe_conversation') answer?.({ ok: true, data: { conversation: snapshot } });
      return socket;
    },
  };
  const send = (event: string, payload: unknown) => (listeners.get(event) ?? []).forEach((listener) => listener(payload));
  return { socket: socket as unknown as PageSocket, send };
}

/** The API's reads of the conversation, each answered when the test says. */
function pendingReads() {
  const reads: Array<(conversation: Conversation) => void> = [];
  globalThis.fetch = (async () =>
    new Promise<Response>((resolve) => reads.push((conversation) => resolve(new Response(JSON.stringify({ data: conversation }), { status: 200 }))))) as typeof fetch;
  return reads;
}

const conversation = (seq: number, status: string): Conversation => ({ id: 'c1', seq, status, steps: [] }) as unknown as Conversation;
const updated = (seq: number, status: string) => ({ conversation_id: 'c1', seq, status, completed_at: null, error: null });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the console keeps a conversation current', () => {
  const realFetch = globalThis.fetch;
  beforeAll(() => {
    (globalThis as { document?: unknown }).document = { visibilityState: 'visible', addEventListener: () => undefined, removeEventListener: () => undefined };
  });
  afterAll(() => {
    globalThis.fetch = realFetch;
    delete (globalThis as { document?: unknown }).document;
  });

  test('a gap seen while a read is on its way is read again after it: the page ends where the API is', async () => {
    const reads = pendingReads();
    const { socket, send } = standInSocket(conversation(1, 'planning'));
    const shown: string[] = [];
    const stop = watchConversation('c1', (c) => shown.push(`${c.seq} ${c.status}`), (error) => shown.push(`error ${error.message}`), socket);
    send('ConversationUpdated', updated(3, 'running')); // a gap (2 missed): read again
    await settle();
    expect(reads).toHaveLength(1);
    send('ConversationUpdated', updated(5, 'awaiting_approval')); // a gap again, while that read is on its way
    reads[0]!(conversation(3, 'running')); // answered before change 4 and 5
    await settle();
    // The read after it: before, none was made, and the page stayed at 3 for good.
    expect(reads).toHaveLength(2);
    reads[1]!(conversation(5, 'awaiting_approval'));
    await settle();
    expect(shown.at(-1)).toBe('5 awaiting_approval');
    stop();
  });

  test('a read answered before an event the page applied meanwhile does not take the page back', async () => {
    const reads = pendingReads();
    const { socket, send } = standInSocket(conversation(3, 'planning'));
    const shown: string[] = [];
    const stop = watchConversation('c1', (c) => shown.push(`${c.seq} ${c.status}`), () => undefined, socket);
    // A step the page does not know yet (a plan just made): read again.
    send('ConversationStepUpdated', { conversation_id: 'c1', seq: 3, conversation_status: 'planning', step: { id: 's1', status: 'pending' } });
    await settle();
    expect(reads).toHaveLength(1);
    // Meanwhile the next change arrives, and is shown.
    send('ConversationUpdated', updated(4, 'awaiting_approval'));
    await settle();
    expect(shown.at(-1)).toBe('4 awaiting_approval');
    // The read, answered before that change: before, it took the page back to 3 for good.
    reads[0]!(conversation(3, 'planning'));
    await settle();
    expect(shown.at(-1)).toBe('4 awaiting_approval');
    stop();
  });
});
