import { Schema } from 'mongoose';

/** Who started or decided something: the identity and the token it used, as stored beside it. */
export const actorSchema = new Schema(
  {
    type: { type: String, enum: ['person', 'service_account'], required: true },
    id: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    token_id: { type: Schema.Types.ObjectId, default: null },
    // The console session it acted in (null: a bearer token, a schedule's tick, or an older version).
    session_id: { type: Schema.Types.ObjectId, default: null },
  },
  { _id: false },
);

/** An actor as it is written: the identity and the token it used. */
export interface Actor {
  type: 'person' | 'service_account';
  id: string;
  name: string;
  token_id: string | null;
  /** The console session it acted in; null or absent otherwise. */
  session_id?: string | null;
}

export interface StoredActor {
  type: string;
  id: { toString(): string };
  name: string;
  token_id?: { toString(): string } | null;
  session_id?: { toString(): string } | null;
}

/** "alice (person)", "ci-web (service account)": an identity by its name. */
export const actorLine = (identity: { type: string; name: string }) => `${identity.name} (${identity.type === 'person' ? 'person' : 'service account'})`;

/** What a run records of who triggered it (a conversation likewise of who started it). */
export interface TriggeredBy {
  actor?: StoredActor | null;
  /** As stored: the token's name when one was used (the only record of older versions), else the actor's line. */
  triggered_by: string;
  /** A schedule's tick: its schedule. */
  schedule?: { name: string } | null;
}

/**
 * How a run's `triggered_by` (and a conversation's `created_by`) reads, wherever it is shown: a
 * bearer token, whoever's (a person's, a service account's, an agent's), "API token: <token name>";
 * a console session or a person signed in without a token, "alice (person)"; a schedule's tick,
 * "schedule nightly as ci-nightly (service account)". What older versions stored reads the same:
 * without an actor, or with a token and no session, by its token's name.
 */
export function triggeredByText({ actor, triggered_by, schedule }: TriggeredBy): string {
  const by = !actor || (actor.token_id && !actor.session_id) ? `API token: ${triggered_by}` : actorLine(actor);
  return schedule ? `schedule ${schedule.name} as ${by}` : by;
}

/** A conversation's `created_by`, as a run's `triggered_by` reads. */
export const createdByText = (conversation: { actor?: StoredActor | null; created_by: string }) => triggeredByText({ actor: conversation.actor, triggered_by: conversation.created_by });

/** The actor as the API shows it, or null for what an older version recorded. */
export const actorView = (actor: StoredActor | null | undefined) =>
  actor ? { type: actor.type as 'person' | 'service_account', id: actor.id.toString(), name: actor.name, token_id: actor.token_id?.toString() ?? null } : null;
