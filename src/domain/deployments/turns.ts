import { Types } from 'mongoose';
import { asObjectId } from '../ids';
import { claimTurn, releaseTurn, turnHolder } from '../servers/store';
import { DeploymentRunModel } from './model';

/*
 * Whose turn it is on a server. Runs on one server never interleave: a run takes the server's turn
 * (kept on the server document) before its first step, and its end gives it back (runs.ts). The
 * server's queue workflow hands turns out in queue order; a fleet target with nothing ahead of it
 * takes its turn itself, without the queue.
 */


/**
 * The server's turn for `runId`: taken when free or already its own (a retried call), or when the
 * run holding it has ended (its end could not give it back: a crash between the two writes).
 */
export async function takeTurn(serverId: string | Types.ObjectId, runId: string | Types.ObjectId): Promise<'taken' | 'busy'> {
  const run = asObjectId(runId);
  if (await claimTurn(serverId, run)) return 'taken';
  const holder = await turnHolder(serverId);
  if (!holder) return holder === null && (await claimTurn(serverId, run)) ? 'taken' : 'busy';
  if (await DeploymentRunModel.exists({ _id: holder, status: { $in: ['queued', 'running'] } })) return 'busy';
  return (await claimTurn(serverId, run, holder)) ? 'taken' : 'busy';
}

/**
 * A fleet target placed at `place` in its server's queue (`turn`: it took the turn with its place)
 * keeps or takes the turn itself when nothing is ahead of it there: no run queued before it, and
 * none running (one begun before turns were kept holds none). Something ahead: a turn taken goes back.
 */
export async function takeTurnIfFirst(serverId: string, runId: string, { place, turn }: { place: number; turn: boolean }): Promise<boolean> {
  if (await runsAhead(serverId, runId, place)) {
    if (turn) await releaseTurn(serverId, asObjectId(runId));
    return false;
  }
  return turn || (await takeTurn(serverId, runId)) === 'taken';
}

/** Whether a run is ahead of `runId` (at `place`) on the server: running, or queued at an earlier place. */
export async function runsAhead(serverId: string, runId: string, place: number): Promise<boolean> {
  // The driver's own: one per fleet target.
  const ahead = await DeploymentRunModel.collection.findOne(
    { server_id: asObjectId(serverId), _id: { $ne: asObjectId(runId) }, $or: [{ status: 'running' }, { status: 'queued', queue_seq: { $ne: null, $lt: place } }] },
    { projection: { _id: 1 } },
  );
  return ahead !== null;
}

/** Whether runs wait in the server's queue (placed, not begun). */
export async function runsWaitingOn(serverId: string | Types.ObjectId): Promise<boolean> {
  return !!(await DeploymentRunModel.exists({ server_id: serverId, status: 'queued', queue_seq: { $ne: null } }));
}
