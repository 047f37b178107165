import { createHash, randomBytes } from 'node:crypto';
import { Schema, model } from 'mongoose';

/**
 * A sign-in through OpenID Connect between the redirect to the provider and its callback: the PKCE
 * verifier, state and nonce. Kept here, not in a cookie, so any API process can finish a sign-in
 * another began, nothing secret reaches the browser, and taking it deletes it (a callback replayed
 * finds nothing). The browser holds only a random key to it, whose SHA-256 is stored.
 */
const pendingSignInSchema = new Schema({
  key_hash: { type: String, required: true, unique: true },
  state: { type: String, required: true },
  nonce: { type: String, required: true },
  code_verifier: { type: String, required: true },
  redirect_uri: { type: String, required: true },
  // MongoDB removes the document a while after it (the TTL index); take() refuses it at once.
  expires_at: { type: Date, required: true },
});
pendingSignInSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export const PendingSignInModel = model('PendingSignIn', pendingSignInSchema);

/** How long a person has at the provider (login, consent) before the sign-in must start again. */
export const PENDING_SIGN_IN_SECONDS = 10 * 60;

const hashOf = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** Records a sign-in begun; returns the key for the browser's cookie. */
export async function beginSignIn(pending: PendingSignIn): Promise<string> {
  const key = randomBytes(32).toString('base64url');
  await PendingSignInModel.create({
    key_hash: hashOf(key),
    state: pending.state,
    nonce: pending.nonce,
    code_verifier: pending.codeVerifier,
    redirect_uri: pending.redirectUri,
    expires_at: new Date(Date.now() + PENDING_SIGN_IN_SECONDS * 1000),
  });
  return key;
}

/** The sign-in a cookie's key began, removed (it is used once); null when unknown or too old. */
export async function takeSignIn(key: string): Promise<PendingSignIn | null> {
  const found = await PendingSignInModel.findOneAndDelete({ key_hash: hashOf(key) }).lean();
  if (!found || found.expires_at.getTime() <= Date.now()) return null;
  return { state: found.state, nonce: found.nonce, codeVerifier: found.code_verifier, redirectUri: found.redirect_uri };
}
