import type { Types } from 'mongoose';
import { asObjectId } from '../ids';
import { ServerModel, type Server, type ServerStatus } from './model';

/*
 * The servers store: every write to a server document — its creation, its verification and health
 * (status, pinned host key, last error), its run queue counter — goes through these transitions.
 */

type Id = string | Types.ObjectId;

/** A server as a person adds it: its credentials sealed already (bound to its `_id`). */
export type NewServer = Pick<Server, '_id' | 'organization_id' | 'title' | 'tags' | 'host' | 'port' | 'username' | 'auth_method' | 'credentials'>;

/** A new server (unverified); rejects with code 11000 when the organization has one for the same user@host:port. */
export async function createServer(server: NewServer): Promise<void> {
  await ServerModel.create(server);
}

/** A person renamed or re-tagged it: the server as it is now, or null when it is not the organization's. */
export async function updateServerDetails(id: Id, organizationId: string, details: { title?: string; tags?: string[] }) {
  return ServerModel.findOneAndUpdate({ _id: id, organization_id: organizationId }, { $set: details }, { returnDocument: 'after' }).lean<Server>();
}

export async function deleteServer(id: Id): Promise<void> {
  await ServerModel.deleteOne({ _id: id });
}

/** Verification succeeded: verified, with its fingerprint and the host key it presented pinned. */
export async function markVerified(id: Id, { fingerprint, hostKey }: { fingerprint: unknown; hostKey: string }): Promise<void> {
  const now = new Date();
  await ServerModel.updateOne({ _id: id }, { $set: { status: 'verified', fingerprint, host_key_fingerprint: hostKey, verified_at: now, last_checked_at: now, last_error: null } });
}

/** A verification attempt failed (more may follow): why, with the status left as it is. */
export async function noteVerificationError(id: Id, message: string): Promise<void> {
  await ServerModel.updateOne({ _id: id }, { $set: { last_error: message } });
}

/** Verification gave up: unverified, saying why. */
export async function markUnverified(id: Id, message: string): Promise<void> {
  await ServerModel.updateOne({ _id: id }, { $set: { status: 'unverified', last_error: message } });
}

/**
 * A health check's result, written only if nothing changed the server since the check began (a
 * re-verification, a new pin): `seen` is the status and pinned key the check started from.
 */
export async function recordHealth(id: Id, seen: { status: ServerStatus; hostKey: string }, next: ServerStatus, error: string | null): Promise<void> {
  await ServerModel.updateOne(
    { _id: id, status: seen.status, host_key_fingerprint: seen.hostKey },
    { $set: { status: next, last_checked_at: new Date(), last_error: error } },
  );
}

/**
 * `count` places in a verified server's run queue (its host key pinned), in the organization: the
 * first of them, or null when the server is not there or not runnable.
 */
export async function takeRunQueuePlaces(id: Types.ObjectId, organizationId: string, count: number): Promise<number | null> {
  const server = await ServerModel.findOneAndUpdate(
    { _id: id, organization_id: organizationId, host_key_fingerprint: { $type: 'string' } },
    { $inc: { run_seq: count } },
    { returnDocument: 'after', projection: { run_seq: 1 } },
  ).lean();
  return server ? server.run_seq - count + 1 : null;
}

/*
 * A server's turn: the one run allowed to run there now. Runs take it before their first step and
 * it is given back when they end; these three writes and reads are its only ones. They leave the
 * server's `updatedAt` alone: a turn is not a change a person made.
 */

/** The turn, for `runId`: taken when free, already its own, or held by `staleHolder` (a run that has ended). */
export async function claimTurn(id: Id, runId: Types.ObjectId, staleHolder?: Types.ObjectId): Promise<boolean> {
  const holders = staleHolder ? [null, runId, staleHolder] : [null, runId];
  const claimed = await ServerModel.updateOne({ _id: id, turn_run_id: { $in: holders } }, { $set: { turn_run_id: runId } }, { timestamps: false });
  return claimed.matchedCount > 0;
}

/** The run holding the server's turn (null: nobody), or undefined when the server is gone. */
export async function turnHolder(id: Id): Promise<Types.ObjectId | null | undefined> {
  const server = await ServerModel.findById(id, { turn_run_id: 1 }).lean();
  return server ? (server.turn_run_id ?? null) : undefined;
}

/**
 * A place in a verified server's run queue for `runId`, and the server's turn with it if nobody
 * holds it: null when the server is not there or not runnable.
 */
export async function takePlaceAndTurn(id: Types.ObjectId, organizationId: string, runId: Types.ObjectId): Promise<{ place: number; turn: boolean } | null> {
  // The driver's own (as releaseTurn): one per fleet target, every value typed already.
  const server = await ServerModel.collection.findOneAndUpdate(
    { _id: id, organization_id: asObjectId(organizationId), host_key_fingerprint: { $type: 'string' } },
    [{ $set: { run_seq: { $add: ['$run_seq', 1] }, turn_run_id: { $ifNull: ['$turn_run_id', runId] } } }],
    { returnDocument: 'after', projection: { run_seq: 1, turn_run_id: 1 } },
  );
  return server ? { place: server.run_seq as number, turn: runId.equals((server.turn_run_id as Types.ObjectId | null) ?? undefined) } : null;
}

/** `runId` ended: its turn is free again. The server's last place taken when it held the turn, else null. */
export async function releaseTurn(id: Id, runId: Types.ObjectId): Promise<number | null> {
  const server = await ServerModel.collection.findOneAndUpdate({ _id: asObjectId(id), turn_run_id: runId }, { $set: { turn_run_id: null } }, { projection: { run_seq: 1 } });
  return (server?.run_seq as number | undefined) ?? null;
}
