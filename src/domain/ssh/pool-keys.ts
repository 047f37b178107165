import { createHash } from 'node:crypto';
import type { SshTarget } from './connect';

/** What makes two targets the same connection: address, login, credentials, pinned host key, and the hops to it. */
export const identityOf = (t: SshTarget): string =>
  createHash('sha256')
    .update(JSON.stringify([t.host, t.port, t.username, t.privateKey, t.passphrase, t.password, t.hostKeyFingerprint, t.via ? identityOf(t.via) : null]))
    .digest('hex');

/** A connection's key in the pool: the server's id, and the hops it is reached through (one server may be reached by two routes). */
export const poolKeyOf = (t: SshTarget): string => (t.via ? `${t.key}<${poolKeyOf(t.via)}` : t.key);
