import { Schema, Types, model, type InferSchemaType } from 'mongoose';

/**
 * A console sign-in: the browser holds a random secret in an HttpOnly cookie; only its SHA-256 is
 * stored. The session acts with its token's organization and scopes, or (a person signed in through
 * OpenID Connect, no token) with its person's rights; checked again on every request.
 */
const consoleSessionSchema = new Schema({
  secret_hash: { type: String, required: true, unique: true },
  // null: a person signed in through OpenID Connect.
  token_id: { type: Schema.Types.ObjectId, ref: 'ApiToken', default: null, index: true },
  // Who the session acts for (null on sessions opened before identities were recorded on them).
  identity_id: { type: Schema.Types.ObjectId, ref: 'Identity', default: null, index: true },
  organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
  created_at: { type: Date, required: true },
  last_seen_at: { type: Date, required: true },
  // The absolute end; MongoDB removes the document a while after it (the TTL index).
  expires_at: { type: Date, required: true },
  // Set by sign-out just before the document goes: its sockets are told why (a delete alone is an expiry).
  signed_out_at: { type: Date, default: null },
});
consoleSessionSchema.index({ expires_at: 1 }, { expireAfterSeconds: 0 });

export type ConsoleSession = InferSchemaType<typeof consoleSessionSchema> & { _id: Types.ObjectId };
export const ConsoleSessionModel = model('ConsoleSession', consoleSessionSchema);
