import type { Server, Socket } from 'socket.io';
import type { Logger } from '../../logger';
import { ApiTokenModel } from '../../domain/tokens/model';
import { ConsoleSessionModel } from '../../domain/sessions/model';
import { IdentityModel } from '../../domain/access/model';
import type { Principal } from '../../domain/tokens/service';
import { watchWithResume } from '../../domain/change-streams';

// setTimeout fires at once beyond this (about 24.8 days): a later expiry is caught by a later connection's check.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

type SessionSocket = Socket & { data: { principal: Principal; sessionId?: string } };

const MESSAGES = {
  revoked: 'The token was revoked',
  expired: 'The token expired',
  signed_out: 'The console session was signed out',
  disabled: 'Your identity was disabled',
} as const;

function end(socket: Socket, reason: keyof typeof MESSAGES, message: string = MESSAGES[reason]) {
  socket.emit('session_ended', { reason, message });
  socket.disconnect(true);
}

/**
 * A new socket's token and identity are checked once more: a revocation or a disabling whose change
 * event was handled while this socket was still connecting found no socket to end.
 */
export async function endIfRevokedMeanwhile(socket: SessionSocket): Promise<void> {
  const { tokenId, identity } = socket.data.principal;
  if (tokenId && (await ApiTokenModel.exists({ _id: tokenId, revoked_at: { $ne: null } }))) return end(socket, 'revoked');
  if (await IdentityModel.exists({ _id: identity.id, disabled_at: { $ne: null } })) end(socket, 'disabled');
}

/** A socket whose token expires is disconnected when it does. */
export function endAtExpiry(socket: SessionSocket): void {
  const expiresAt = socket.data.principal.expiresAt;
  if (!expiresAt) return;
  const delay = expiresAt.getTime() - Date.now();
  if (delay > LONGEST_TIMER_MS) return;
  const timer = setTimeout(() => end(socket, 'expired'), Math.max(0, delay));
  socket.once('disconnect', () => clearTimeout(timer));
}

/**
 * Revocation takes effect at once on open sockets too: every API process watches the tokens and
 * disconnects its sockets of a token just revoked, wherever the revocation was made.
 */
export function endRevokedSessions(io: Server, log: Logger) {
  return watchWithResume(
    ApiTokenModel.collection,
    [{ $match: { operationType: 'update', 'updateDescription.updatedFields.revoked_at': { $type: 'date' } } }],
    (change) => {
      if (!('documentKey' in change)) return;
      const tokenId = String(change.documentKey._id);
      for (const socket of io.of('/').sockets.values()) {
        if ((socket as SessionSocket).data.principal?.tokenId === tokenId) end(socket, 'revoked');
      }
    },
    log,
    'token revocation',
  );
}

/**
 * Disabling a person (or a service account) ends its sockets at once, on every API process: those
 * of its tokens and of its console sessions, with or without a token.
 */
export function endDisabledIdentities(io: Server, log: Logger) {
  return watchWithResume(
    IdentityModel.collection,
    [{ $match: { operationType: 'update', 'updateDescription.updatedFields.disabled_at': { $type: 'date' } } }],
    (change) => {
      if (!('documentKey' in change)) return;
      const identityId = String(change.documentKey._id);
      for (const socket of io.of('/').sockets.values()) {
        if ((socket as SessionSocket).data.principal?.identity.id === identityId) end(socket, 'disabled');
      }
    },
    log,
    'identity disabled',
    // Only the key matters; the identity may be gone by the time the change is read.
    'default',
  );
}

/**
 * A console session's end ends its sockets at once, on every API process: signed out (marked just
 * before it is removed), or removed without that mark (idle too long, or past its absolute end).
 */
export function endSignedOutSessions(io: Server, log: Logger) {
  return watchWithResume(
    ConsoleSessionModel.collection,
    [
      {
        $match: {
          $or: [{ operationType: 'delete' }, { operationType: 'update', 'updateDescription.updatedFields.signed_out_at': { $type: 'date' } }],
        },
      },
    ],
    (change) => {
      if (!('documentKey' in change)) return;
      const sessionId = String(change.documentKey._id);
      const signedOut = change.operationType === 'update';
      for (const socket of io.of('/').sockets.values()) {
        if ((socket as SessionSocket).data.sessionId !== sessionId) continue;
        if (signedOut) end(socket, 'signed_out');
        else end(socket, 'expired', 'The console session expired');
      }
    },
    log,
    'console session end',
    // A signed-out session is removed right after it is marked: the mark alone says why.
    'default',
  );
}
