import type { Types } from 'mongoose';
import { asObjectId } from '../ids';
import { ServerModel } from './model';

/*
 * A server's side of its run queue, kept on the server document: `run_seq`, the last place taken in
 * the queue, and `turn_run_id`, the run allowed to run there now. These are those fields' only
 * writes. They leave the server's `updatedAt` alone: a place or a turn is not a change a person made.
 */

type Id = string | Types.ObjectId;

/**
 * `count` places in a verified server's queue (its host key pinned), in the organization: the first
 * of them and the server's title, or null when the server is not there or not runnable.
 */
export async function takePlaces(serverId: Types.ObjectId, organizationId: string, count: number): Promise<{ first: number; title: string } | null> {
  const server = await ServerModel.collection.findOneAndUpdate(
    { _id: serverId, organization_id: asObjectId(organizationId), host_key_fingerprint: { $type: 'string' } },
    { $inc: { run_seq: count } },
    { returnDocument: 'after', projection: { run_seq: 1, title: 1 } },
  );
  return server ? { first: (server.run_seq as number) - count + 1, title: server.title as string } : null;
}

/**
 * A place in a verified server's queue for `runId`, and the server's turn with it if nobody holds
 * it, in one write: null when the server is not there or not runnable.
 */
export async function takePlaceAndTurn(serverId: Types.ObjectId, organizationId: string, runId: Types.ObjectId): Promise<{ place: number; turn: boolean } | null> {
  const server = await ServerModel.collection.findOneAndUpdate(
    { _id: serverId, organization_id: asObjectId(organizationId), host_key_fingerprint: { $type: 'string' } },
    // Taken by the run itself (turn_by_queue false) when nobody held it.
    [{ $set: { run_seq: { $add: ['$run_seq', 1] }, turn_by_queue: { $cond: [{ $eq: [{ $ifNull: ['$turn_run_id', null] }, null] }, false, '$turn_by_queue'] }, turn_run_id: { $ifNull: ['$turn_run_id', runId] } } }],
    { returnDocument: 'after', projection: { run_seq: 1, turn_run_id: 1 } },
  );
  return server ? { place: server.run_seq as number, turn: runId.equals((server.turn_run_id as Types.ObjectId | null) ?? undefined) } : null;
}

/**
 * The turn, for `runId`: taken when free, already its own, or held by `staleHolder` (a run that has
 * ended). `byQueue`: the server's queue workflow gives it (and waits for the run's end itself).
 */
export async function claimTurn(serverId: Id, runId: Types.ObjectId, byQueue: boolean, staleHolder?: Types.ObjectId): Promise<boolean> {
  const holders = staleHolder ? [null, runId, staleHolder] : [null, runId];
  const claimed = await ServerModel.collection.updateOne({ _id: asObjectId(serverId), turn_run_id: { $in: holders } }, { $set: { turn_run_id: runId, turn_by_queue: byQueue } });
  return claimed.matchedCount > 0;
}

/** The run holding the server's turn (null: nobody), or undefined when the server is gone. */
export async function turnHolder(serverId: Id): Promise<Types.ObjectId | null | undefined> {
  const server = await ServerModel.collection.findOne({ _id: asObjectId(serverId) }, { projection: { turn_run_id: 1 } });
  return server ? ((server.turn_run_id as Types.ObjectId | null | undefined) ?? null) : undefined;
}

/**
 * `runId` ended, or will not take the turn it holds: the turn is free again. When it held the turn:
 * the server's last place taken, and whether the queue workflow had given it the turn; else null.
 */
export async function releaseTurn(serverId: Id, runId: Types.ObjectId): Promise<{ lastPlace: number; byQueue: boolean } | null> {
  const server = await ServerModel.collection.findOneAndUpdate(
    { _id: asObjectId(serverId), turn_run_id: runId },
    { $set: { turn_run_id: null, turn_by_queue: false } },
    { projection: { run_seq: 1, turn_by_queue: 1 } },
  );
  return server ? { lastPlace: server.run_seq as number, byQueue: server.turn_by_queue === true } : null;
}
