import type { Server, Socket } from 'socket.io';
import { ApiTokenModel } from '../../domain/tokens/model';
import { ConsoleSessionModel } from '../../domain/sessions/model';
import { IdentityModel } from '../../domain/access/model';
import type { Principal } from '../../domain/tokens/service';
import type { ChangeListener } from '../../domain/change-streams';

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

const date = { $type: 'date' };
const setToDate = (change: Parameters<ChangeListener['onChange']>[0], field: string) =>
  change.operationType === 'update' && change.updateDescription?.updatedFields?.[field] instanceof Date;

/**
 * A session's end ends its sockets at once, on every API process, wherever it was ended:
 * - a token revoked: the sockets of that token;
 * - a person (or a service account) disabled: those of its tokens and of its console sessions, with or
 *   without a token;
 * - a console session signed out (marked just before it is removed: the mark alone says why), or
 *   removed without that mark (idle too long, or past its absolute end).
 * Only the changed document's key is read: the document may be gone by the time the change is. A
 * listener of the API's one change stream (src/roles/api.ts).
 */
export function sessionEndsListener(io: Server): ChangeListener {
  const tokens = ApiTokenModel.collection.collectionName;
  const identities = IdentityModel.collection.collectionName;
  const consoleSessions = ConsoleSessionModel.collection.collectionName;
  const sockets = () => [...io.of('/').sockets.values()] as SessionSocket[];
  return {
    collections: [tokens, identities, consoleSessions],
    match: {
      $or: [
        { 'ns.coll': tokens, operationType: 'update', 'updateDescription.updatedFields.revoked_at': date },
        { 'ns.coll': identities, operationType: 'update', 'updateDescription.updatedFields.disabled_at': date },
        { 'ns.coll': consoleSessions, operationType: 'delete' },
        { 'ns.coll': consoleSessions, operationType: 'update', 'updateDescription.updatedFields.signed_out_at': date },
      ],
    },
    onChange: (change) => {
      if (!('documentKey' in change)) return;
      const id = String(change.documentKey._id);
      // The rights cache asks for every change of identities: this listener is given those too.
      const collection = change.ns?.coll;
      if (collection === tokens && setToDate(change, 'revoked_at')) {
        for (const socket of sockets()) if (socket.data.principal?.tokenId === id) end(socket, 'revoked');
      } else if (collection === identities && setToDate(change, 'disabled_at')) {
        for (const socket of sockets()) if (socket.data.principal?.identity.id === id) end(socket, 'disabled');
      } else if (collection === consoleSessions && (change.operationType === 'delete' || setToDate(change, 'signed_out_at'))) {
        for (const socket of sockets()) {
          if (socket.data.sessionId !== id) continue;
          if (change.operationType === 'update') end(socket, 'signed_out');
          else end(socket, 'expired', 'The console session expired');
        }
      }
    },
  };
}
