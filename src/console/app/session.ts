import type { SessionView } from './api-types';

type Listener = (session: SessionView | null) => void;

let current: SessionView | null = null;
const listeners = new Set<Listener>();

/** The signed-in session, in this page's memory only (the cookie itself is HttpOnly). */
export const session = {
  get: () => current,
  set(next: SessionView | null) {
    current = next;
    listeners.forEach((listener) => listener(next));
  },
  subscribe(listener: Listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  /** Whether the session's identity may do this somewhere (its roles, narrowed by its token's scopes). */
  can(action: string) {
    return !!current && current.rights.includes(action as never);
  },
};
