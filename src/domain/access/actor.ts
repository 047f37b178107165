import { Schema } from 'mongoose';

/** Who started or decided something: the identity and the token it used, as stored beside it. */
export const actorSchema = new Schema(
  {
    type: { type: String, enum: ['person', 'service_account'], required: true },
    id: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    token_id: { type: Schema.Types.ObjectId, default: null },
  },
  { _id: false },
);

/** An actor as it is written: the identity and the token it used. */
export interface Actor {
  type: 'person' | 'service_account';
  id: string;
  name: string;
  token_id: string | null;
}

export interface StoredActor {
  type: string;
  id: { toString(): string };
  name: string;
  token_id?: { toString(): string } | null;
}

/** "alice (person)", or for what an older version recorded (a token's name alone) "API token: <name>". */
export const actorText = (actor: StoredActor | null | undefined, legacyTokenName: string) =>
  actor ? `${actor.name} (${actor.type === 'person' ? 'person' : 'service account'})` : `API token: ${legacyTokenName}`;

/** The actor as the API shows it, or null for what an older version recorded. */
export const actorView = (actor: StoredActor | null | undefined) =>
  actor ? { type: actor.type as 'person' | 'service_account', id: actor.id.toString(), name: actor.name, token_id: actor.token_id?.toString() ?? null } : null;
