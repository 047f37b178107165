import { useEffect, useState } from 'preact/hooks';
import { get } from './api';
import type { ApprovalWait } from './api-types';
import { pageSocket } from './live';
import { session } from './session';

/*
 * What waits for the signed-in person's approval (GET /me/approvals), one copy for the page: the
 * navigation's count and the dashboard's list. Read again whenever the organization's runs change
 * (the socket's RunsChanged, which names nothing), on every reconnect (changes may have been missed)
 * and when the tab comes back into view; one read at a time, one more if asked meanwhile.
 */

type Listener = (runs: ApprovalWait[] | null) => void;

let runs: ApprovalWait[] | null = null;
const listeners = new Set<Listener>();
let reading = false;
let again = false;
let attachedTo: ReturnType<typeof pageSocket> | null = null;

async function read(): Promise<void> {
  if (reading) {
    again = true;
    return;
  }
  reading = true;
  try {
    do {
      again = false;
      runs = await get<ApprovalWait[]>('/api/v1/me/approvals');
      listeners.forEach((listener) => listener(runs));
    } while (again);
  } catch {
    // What is shown stays; the next change, reconnect or look at the tab reads again.
  } finally {
    reading = false;
  }
}

function attach() {
  const socket = pageSocket();
  if (attachedTo === socket) return;
  attachedTo = socket;
  socket.on('RunsChanged', () => void read());
  socket.on('connect', () => void read());
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && listeners.size) void read();
});
// Another person signing in on this page does not see the last one's list.
session.subscribe(() => {
  runs = null;
  listeners.forEach((listener) => listener(null));
});

/** The runs waiting for my approval (null until first read), kept current. */
export function useWaitingForMe(): ApprovalWait[] | null {
  const [value, setValue] = useState(runs);
  useEffect(() => {
    listeners.add(setValue);
    attach();
    void read();
    return () => void listeners.delete(setValue);
  }, []);
  return value;
}

/** Read again now (after this page decided on a gate, say). */
export const rereadWaiting = () => void read();
