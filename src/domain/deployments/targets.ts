import { Types } from 'mongoose';
import type { FleetTarget } from '../contracts/runs';
import { asChange } from '../execution/steps';
import { asObjectId } from '../ids';
import { DeploymentRunModel, type DeploymentRun } from './model';

/*
 * A fleet run's targets: their transitions from waiting for their batch to taking a place in their
 * server's queue (or failing unrun), and the reads of them a fleet run needs. Part of the runs store:
 * a target is a run (runs.ts ends it).
 */

/** A batch's targets still waiting to start (a target closed meanwhile, by a cancel, is not). */
export async function batchTargets(runId: string, batch: number): Promise<FleetTarget[]> {
  const targets = await DeploymentRunModel.find({ parent_run_id: runId, batch, status: 'queued' }, { server_id: 1, server_title: 1 }).sort({ _id: 1 }).lean();
  return targets.map((t) => ({ runId: t._id.toString(), serverId: t.server_id!.toString(), serverTitle: t.server_title ?? t.server_id!.toString() }));
}

/** Targets of a fleet run still waiting for their batch (no place in a queue): skipped, or cancelled. One change each. */
export async function closeWaitingTargets(runId: Types.ObjectId | string, to: 'skipped' | 'cancelled', fromBatch = 0): Promise<number> {
  const closed = await DeploymentRunModel.updateMany(
    { parent_run_id: runId, status: 'queued', queue_seq: null, batch: { $gte: fromBatch } },
    asChange({ $set: { status: to, completed_at: new Date(), 'steps.$[open].status': to } }),
    { arrayFilters: [{ 'open.status': 'pending' }] },
  );
  return closed.modifiedCount;
}

/** What a target records with its place: the workflow it shares with other targets, if it does. */
const sharedWorkflow = (workflowId?: string) => (workflowId ? { workflow_id: workflowId } : {});

/** A target whose batch started takes its place in its server's queue (bookkeeping: its status stays queued); false when it had one, or is not queued. */
export async function placeTarget(targetId: string, queueSeq: number, workflowId?: string): Promise<boolean> {
  const placed = await DeploymentRunModel.updateOne({ _id: targetId, status: 'queued', queue_seq: null }, { $set: { queue_seq: queueSeq, ...sharedWorkflow(workflowId) } });
  return placed.modifiedCount > 0;
}

/**
 * A target whose batch started, placed in its server's queue and begun at once (it holds the
 * server's turn, nothing ahead of it): queued → running in one write. Null when it had a place
 * already, or is not queued.
 */
export async function beginPlacedTarget(targetId: string, queueSeq: number, workflowId?: string): Promise<Pick<DeploymentRun, 'steps' | 'start_step'> | null> {
  // The driver's own: one per fleet target, every value typed already.
  const now = new Date();
  return DeploymentRunModel.collection.findOneAndUpdate(
    { _id: asObjectId(targetId), status: 'queued', queue_seq: null },
    asChange({ $set: { queue_seq: queueSeq, status: 'running', started_at: now, updatedAt: now, ...sharedWorkflow(workflowId) } }),
    { returnDocument: 'after', projection: { steps: 1, start_step: 1 } },
  ) as Promise<Pick<DeploymentRun, 'steps' | 'start_step'> | null>;
}

/** A target that cannot run (its server gone, or never verified): failed, with why, without a step run. False when it was not queued. */
export async function failUnrunTarget(targetId: string, error: string): Promise<boolean> {
  const failed = await DeploymentRunModel.updateOne(
    { _id: targetId, status: 'queued' },
    asChange({ $set: { status: 'failed', error, completed_at: new Date(), 'steps.$[open].status': 'skipped' } }),
    { arrayFilters: [{ 'open.status': 'pending' }] },
  );
  return failed.modifiedCount > 0;
}

/** How many of each fleet run's targets are in each status. */
export async function targetCounts(runIds: Types.ObjectId[]): Promise<Map<string, Record<string, number>>> {
  const counts = new Map<string, Record<string, number>>();
  if (!runIds.length) return counts;
  const rows = await DeploymentRunModel.aggregate<{ _id: { run: Types.ObjectId; status: string }; n: number }>([
    { $match: { parent_run_id: { $in: runIds } } },
    { $group: { _id: { run: '$parent_run_id', status: '$status' }, n: { $sum: 1 } } },
  ]);
  for (const row of rows) {
    const key = row._id.run.toString();
    counts.set(key, { ...counts.get(key), [row._id.status]: row.n });
  }
  return counts;
}

