import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConsoleSessionModel, type ConsoleSession } from './model';

/** How long a session lives: idle (no request) and in all. */
export interface SessionLifetime {
  idleSeconds: number;
  maxSeconds: number;
}

// last_seen_at is written at most this often (or a quarter of the idle time): every request would turn reads into writes.
const SEEN_RESOLUTION_MS = 30_000;

const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** The anti-forgery token of a session: derived from its secret, so nothing more is stored and a reload can ask for it again. */
export const csrfTokenOf = (secret: string) => createHmac('sha256', secret).update('bosun-console-csrf').digest('base64url');

export function csrfTokenMatches(secret: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(csrfTokenOf(secret));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Who a new session acts for: a token's identity, or a person signed in without one (tokenId null). */
export interface SessionOwner {
  tokenId: string | null;
  identityId: string;
  organizationId: string;
  /** The token's end, which the session never outlives. */
  expiresAt: Date | null;
}

/** A new session; returns the secret for the cookie, which exists nowhere else afterwards. */
export async function openSession(owner: SessionOwner, lifetime: SessionLifetime) {
  const { tokenId, identityId, organizationId, expiresAt: tokenExpiresAt } = owner;
  const secret = randomBytes(32).toString('base64url');
  const now = new Date();
  const end = new Date(now.getTime() + lifetime.maxSeconds * 1000);
  const session = await ConsoleSessionModel.create({
    secret_hash: hashOf(secret),
    token_id: tokenId,
    identity_id: identityId,
    organization_id: organizationId,
    created_at: now,
    last_seen_at: now,
    // Never outlives its token.
    expires_at: tokenExpiresAt && tokenExpiresAt < end ? tokenExpiresAt : end,
  });
  return { secret, session: session.toObject() as ConsoleSession };
}

/** The live session behind a cookie's secret, touched; null when unknown, idle too long or past its end (then removed). */
export async function findSession(secret: string, lifetime: SessionLifetime): Promise<ConsoleSession | null> {
  const session = await ConsoleSessionModel.findOne({ secret_hash: hashOf(secret) }).lean<ConsoleSession>();
  if (!session) return null;
  const now = Date.now();
  if (session.expires_at.getTime() <= now || session.last_seen_at.getTime() + lifetime.idleSeconds * 1000 <= now) {
    await ConsoleSessionModel.deleteOne({ _id: session._id });
    return null;
  }
  if (now - session.last_seen_at.getTime() > Math.min(SEEN_RESOLUTION_MS, (lifetime.idleSeconds * 1000) / 4)) {
    await ConsoleSessionModel.updateOne({ _id: session._id }, { $set: { last_seen_at: new Date(now) } });
  }
  return session;
}

/** Sign-out: the session ends for every page using it. */
export async function closeSession(secret: string): Promise<boolean> {
  const marked = await ConsoleSessionModel.findOneAndUpdate({ secret_hash: hashOf(secret) }, { $set: { signed_out_at: new Date() } }, { projection: { _id: 1 } }).lean();
  if (!marked) return false;
  await ConsoleSessionModel.deleteOne({ _id: marked._id });
  return true;
}
