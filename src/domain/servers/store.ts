import { Types, type ClientSession } from 'mongoose';
import { ServerModel, type Server, type ServerStatus } from './model';
import { inTransaction } from '../database';
import { recordServerEvent } from './notification-events';
import { QUARANTINE_TAG } from './quarantine';

/*
 * The servers store: every write to a server document — its creation, its verification and health
 * (status, pinned host key, last error) — goes through these transitions; its run queue's fields
 * (`run_seq`, `turn_run_id`) are the run queue's own (run-turn.ts beside it).
 */

type Id = string | Types.ObjectId;

/** A server as a person adds it: its credentials sealed already (bound to its `_id`). */
export type NewServer = Pick<Server, '_id' | 'organization_id' | 'title' | 'tags' | 'host' | 'port' | 'username' | 'auth_method' | 'credentials'> & {
  inventory?: ImportedDetails['inventory'];
};

/** A new server (unverified); rejects with code 11000 when the organization has one for the same user@host:port. */
export async function createServer(server: NewServer): Promise<void> {
  await ServerModel.create(server);
}

/** A person renamed or re-tagged it: the server as it is now, or null when it is not the organization's. */
export async function updateServerDetails(id: Id, organizationId: string, details: { title?: string; tags?: string[]; via?: string[] }) {
  const { via, ...rest } = details;
  const set = { ...rest, ...(via ? { via: via.map((hop) => new Types.ObjectId(hop)) } : {}) };
  return ServerModel.findOneAndUpdate({ _id: id, organization_id: organizationId }, { $set: set }, { returnDocument: 'after' }).lean<Server>();
}

/** What an inventory import sets on a server it adds or changes. */
export interface ImportedDetails {
  title?: string;
  host?: string;
  port?: number;
  username?: string;
  tags?: string[];
  inventory: { source: string; name: string; tags: string[]; via: string[] };
}

/** An inventory import, applied at once: servers added, changed, and quarantined (tagged, kept) — all or none. */
export async function applyInventoryImport(
  organizationId: string,
  changes: { add: NewServer[]; change: Array<{ id: Id; details: ImportedDetails }>; quarantine: Id[] },
  session: ClientSession,
): Promise<void> {
  if (changes.add.length) await ServerModel.insertMany(changes.add, { session, ordered: true });
  if (changes.change.length) {
    await ServerModel.bulkWrite(changes.change.map(({ id, details }) => ({ updateOne: { filter: { _id: id, organization_id: organizationId }, update: { $set: details } } })), { session });
  }
  if (changes.quarantine.length) await ServerModel.updateMany({ _id: { $in: changes.quarantine }, organization_id: organizationId }, { $addToSet: { tags: QUARANTINE_TAG } }, { session });
}

/** Verification of imported servers could not be started: said on each, so a person re-verifies them. */
export async function noteVerificationNotStarted(ids: Id[], message: string): Promise<void> {
  await ServerModel.updateMany({ _id: { $in: ids } }, { $set: { last_error: message } });
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

/** The servers health sweeps check: verified or offline, their host key pinned. */
const WATCHED_STATUSES: ServerStatus[] = ['verified', 'offline'];
const WATCHED = { status: { $in: WATCHED_STATUSES }, host_key_fingerprint: { $ne: null } };

/** The servers of an organization its health sweep checks. */
export async function watchedServerIds(organizationId: string): Promise<string[]> {
  const watched = await ServerModel.find({ organization_id: organizationId, ...WATCHED }, { _id: 1 }).lean();
  return watched.map((server) => server._id.toString());
}

/** Organizations with servers to watch: each has a health sweep (started again at a worker's start if lost). */
export async function organizationsWithWatchedServers(): Promise<string[]> {
  return (await ServerModel.distinct('organization_id', WATCHED)).map(String);
}

/**
 * A health check's result, written only if nothing changed the server since the check began (a
 * re-verification, a new pin): `seen` is the status and pinned key the check started from.
 */
export async function recordHealth(id: Id, seen: { status: ServerStatus; hostKey: string }, next: ServerStatus, error: string | null, hostKeyChanged = false): Promise<void> {
  // Going offline, or a changed host key, is an event: the change and it are one transaction.
  const event = hostKeyChanged ? 'server.host_key_changed' : next === 'offline' && seen.status !== 'offline' ? 'server.offline' : null;
  // A check that finds what the last one found (most of them) writes its time alone: no transaction.
  if (!event) {
    await ServerModel.updateOne({ _id: id, status: seen.status, host_key_fingerprint: seen.hostKey }, { $set: { status: next, last_checked_at: new Date(), last_error: error } });
    return;
  }
  await inTransaction(async (session) => {
    const changed = await ServerModel.updateOne(
      { _id: id, status: seen.status, host_key_fingerprint: seen.hostKey },
      { $set: { status: next, last_checked_at: new Date(), last_error: error } },
      { session },
    );
    if (changed.modifiedCount && event) await recordServerEvent(id, event, error, session);
  });
}
