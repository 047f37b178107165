import type { Types } from 'mongoose';
import { DeploymentRunModel } from '../deployments/model';
import { asObjectId } from '../ids';

/*
 * The order of a server's queue, read from its runs: a run has a place (`queue_seq`) from its trigger
 * (a one-server run) or from its batch's start (a fleet target); runs take the server's turn in the
 * order of their places. The driver's own reads: one or more per run.
 */

/** Whether a run is ahead of `runId` (at `place`) on the server: running, or queued at an earlier place. */
export async function runsAhead(serverId: string | Types.ObjectId, runId: string | Types.ObjectId, place: number): Promise<boolean> {
  const ahead = await DeploymentRunModel.collection.findOne(
    { server_id: asObjectId(serverId), _id: { $ne: asObjectId(runId) }, $or: [{ status: 'running' }, { status: 'queued', queue_seq: { $ne: null, $lt: place } }] },
    { projection: { _id: 1 } },
  );
  return ahead !== null;
}

/** Whether runs wait in the server's queue (placed, not begun). */
export async function runsWaitingOn(serverId: string | Types.ObjectId): Promise<boolean> {
  return (await DeploymentRunModel.collection.findOne({ server_id: asObjectId(serverId), status: 'queued', queue_seq: { $ne: null } }, { projection: { _id: 1 } })) !== null;
}

/** The queued run with the lowest place on the server (a fleet target waiting for its batch has none yet), or null. */
export function firstPlaced(serverId: string | Types.ObjectId) {
  return DeploymentRunModel.findOne({ server_id: asObjectId(serverId), status: 'queued', queue_seq: { $ne: null } }, { steps: 0, parameters: 0 }).sort({ queue_seq: 1 }).lean();
}

/** Whether a run is still waiting to run (queued), and its place: null when it is not queued (begun, ended, or gone). */
export async function queuedPlace(runId: string | Types.ObjectId): Promise<{ place: number | null } | null> {
  const run = await DeploymentRunModel.collection.findOne({ _id: asObjectId(runId), status: 'queued' }, { projection: { queue_seq: 1 } });
  return run ? { place: (run.queue_seq as number | null) ?? null } : null;
}
