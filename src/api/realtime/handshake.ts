import type { Socket } from 'socket.io';
import type { ClientToServerEvents, ServerToClientEvents } from '../../domain/events';
import type { SessionLifetime } from '../../domain/sessions/store';
import { authenticateToken, type Principal, type Rejection } from '../../domain/tokens/service';
import { assertMayOpenSocket } from '../access/gate';
import { cookieValue, SESSION_COOKIE, sessionPrincipal } from '../http/auth';
import { ApiError } from '../http/errors';

/*
 * A socket's handshake: who it acts for (the same bearer token as HTTP, as `auth: { token }`, or a
 * console page's session cookie), refused as a Socket.IO connect error `{ code, message }` when
 * unknown, ended, or when the gate says it may read nothing.
 */

export interface SocketData {
  principal: Principal;
  /** The console session the socket was opened with (none for a bearer token's). */
  sessionId?: string;
}

export type BosunServerSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, SocketData>;

/** The handshake's Origin, when a browser sent one, names the host it was sent to. */
function sameOrigin(headers: { origin?: string; host?: string }): boolean {
  if (!headers.origin) return true;
  try {
    return new URL(headers.origin).host === headers.host;
  } catch {
    return false;
  }
}

const refused = (code: string, message: string) => Object.assign(new Error(code), { data: { code, message } });

export const socketHandshake = (sessions: SessionLifetime) => async (socket: BosunServerSocket, next: (error?: Error) => void) => {
  const token = (socket.handshake.auth as { token?: unknown })?.token;
  const secret = token === undefined ? cookieValue(socket.handshake.headers.cookie, SESSION_COOKIE) : undefined;
  let principal: Principal | Rejection | 'ended' | null = null;
  if (secret) {
    // A page's socket: only from the page's own origin (the cookie would not come from another site, but say so).
    if (!sameOrigin(socket.handshake.headers)) return next(refused('forbidden', 'A console socket must come from the console’s own origin'));
    const found = await sessionPrincipal(secret, sessions).catch(() => null);
    if (found && typeof found === 'object') socket.data.sessionId = found.session._id.toString();
    principal = found && typeof found === 'object' ? found.principal : found;
  } else if (typeof token === 'string') principal = await authenticateToken(token).catch(() => null);
  if (principal === 'disabled') return next(refused('unauthorized', 'The identity of this token is disabled'));
  if (principal === 'expired') return next(refused('unauthorized', 'The token has expired'));
  if (principal === 'ended') return next(refused('unauthorized', 'The console session has ended: sign in again'));
  if (!principal || principal === 'unknown') return next(refused('unauthorized', 'Send a valid API token as auth.token'));
  try {
    assertMayOpenSocket(principal);
  } catch (error) {
    if (error instanceof ApiError) return next(refused(error.code, error.message));
    throw error;
  }
  socket.data.principal = principal;
  next();
};
