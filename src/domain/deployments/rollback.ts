import { Types } from 'mongoose';
import type { Actor } from '../access/actor';
import { actorLine, triggeredByText } from '../access/actor';
import { ApiTokenModel } from '../tokens/model';
import type { QueuedRun } from '../contracts/runs';
import { asChange } from '../execution/steps';
import { placeOne } from '../servers/trigger-places';
import { inTransaction } from '../database';
import { recordRunEvent } from './notification-events';
import { recordRunDecision } from '../audit/system-decisions';
import { DeploymentModel, DeploymentRunModel, type DeploymentRun } from './model';
import { createRun } from './new-runs';

/*
 * A fleet run's rollback, part of the runs store: one rollback run per server the run touched (a
 * one-server run of the rollback steps, placed in its server's queue like any run, so it never
 * interleaves with another run there), the fleet run's `rollback` block from start to end. The fleet
 * run's workflow (or the rollback workflow a person asks for) runs them, newest batch first.
 */

/** A target touched by its run: at least one of its steps started there. */
const TOUCHED = { 'steps.started_at': { $ne: null } };

export interface RollbackPlan {
  /** The rollback runs, grouped by the batch of the target each undoes, newest batch first. */
  batches: QueuedRun[][];
  touched: number;
}

/** What a rollback run stores as triggered by (as a trigger does): its requester's token's name or line, or without one the run's own. */
async function recordedBy(run: DeploymentRun, requestedBy: Actor | null): Promise<string> {
  if (!requestedBy) return run.triggered_by;
  const token = requestedBy.token_id ? await ApiTokenModel.findById(requestedBy.token_id, { name: 1 }).lean() : null;
  return token?.name ?? actorLine(requestedBy);
}

/**
 * The rollback of a fleet run that has one: its rollback runs created (once: a repeat finds them)
 * and its `rollback` block started. Null when the run has no rollback steps or touched no server.
 */
export async function prepareRollback(runId: string, reason: string, requestedBy: Actor | null = null): Promise<RollbackPlan | null> {
  const run = await DeploymentRunModel.findById(runId).lean<DeploymentRun>();
  const definition = run?.fleet?.rollback;
  if (!run || !definition?.steps.length) return null;
  let rollbacks = await DeploymentRunModel.find({ 'rolls_back.run_id': run._id }).lean<DeploymentRun[]>();
  if (!rollbacks.length) {
    const touched = await DeploymentRunModel.find({ parent_run_id: run._id, ...TOUCHED }, { server_id: 1, server_title: 1, server_host: 1, batch: 1 }).sort({ batch: 1, _id: 1 }).lean<DeploymentRun[]>();
    if (!touched.length) return null;
    // Its start and, for an automatic one (Bosun's decision; a person's is their request's entry), its entry in the trail: one transaction.
    const started = await inTransaction(async (session) => {
      const written = await DeploymentRunModel.updateOne(
        { _id: run._id, rollback: null },
        asChange({ $set: { rollback: { status: 'running', reason, requested_by: requestedBy, touched: touched.length, succeeded: 0, failed: 0, summary: null, started_at: new Date(), completed_at: null } } }),
        { session },
      );
      if (written.modifiedCount && !requestedBy) await recordRunDecision(run, { by: 'automatic rollback', action: 'run.rollback', details: { reason, touched: touched.length } }, session);
      return written;
    });
    if (started.modifiedCount) {
      const triggeredBy = await recordedBy(run, requestedBy);
      for (const target of touched) {
        const place = await placeOne(target.server_id!, run.organization_id.toString());
        // The actor goes in as the trigger's does (stored as given; NewRun names what every run has).
        const fields = {
          organization_id: run.organization_id,
          deployment_id: run.deployment_id,
          server_id: target.server_id!,
          server_title: target.server_title,
          server_host: target.server_host,
          triggered_by: triggeredBy,
          token_id: run.token_id ?? null,
          idempotency_key: null,
          // A server no longer runnable keeps no place: its rollback fails unrun, saying why.
          queue_seq: place,
          parameters: run.parameters,
          steps: definition.steps,
          rolls_back: { run_id: run._id, target_id: target._id, batch: target.batch ?? 1, reason },
          actor: requestedBy ?? run.actor ?? null,
        };
        await createRun(fields);
      }
    }
    rollbacks = await DeploymentRunModel.find({ 'rolls_back.run_id': run._id }).lean<DeploymentRun[]>();
  }
  const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
  const byBatch = new Map<number, QueuedRun[]>();
  for (const rollback of rollbacks) {
    const batch = rollback.rolls_back!.batch;
    byBatch.set(batch, [
      ...(byBatch.get(batch) ?? []),
      {
        runId: rollback._id.toString(),
        organizationId: rollback.organization_id.toString(),
        deploymentId: rollback.deployment_id.toString(),
        serverId: String(rollback.server_id),
        deploymentName: `${deployment?.name ?? '(deleted)'} rollback`,
        triggeredBy: triggeredByText(rollback),
        serverTitle: rollback.server_title ?? String(rollback.server_id),
        ...(rollback.queue_seq !== null && rollback.queue_seq !== undefined ? { place: rollback.queue_seq } : {}),
      },
    ]);
  }
  return { batches: [...byBatch.entries()].sort((a, b) => b[0] - a[0]).map(([, runs]) => runs), touched: rollbacks.length };
}

/** How a fleet run's rollback runs stand: how many are still to finish, succeeded, failed (their servers' titles). */
export async function rollbackProgress(runId: string) {
  const rollbacks = await DeploymentRunModel.find({ 'rolls_back.run_id': new Types.ObjectId(runId) }, { status: 1, server_title: 1 }).lean();
  const unfinished = rollbacks.filter((r) => !['success', 'failed', 'cancelled'].includes(r.status)).length;
  const failed = rollbacks.filter((r) => r.status === 'failed' || r.status === 'cancelled').map((r) => r.server_title ?? '');
  return { total: rollbacks.length, unfinished, succeeded: rollbacks.filter((r) => r.status === 'success').length, failed };
}

/** The rollback's end on its fleet run: its counts and summary ("rolled back on 4 of 4 touched servers"). */
export async function finishRollback(runId: string, progress: { total: number; succeeded: number; failed: string[] }): Promise<string> {
  const summary = progress.failed.length
    ? `rolled back on ${progress.succeeded} of ${progress.total} touched servers; the rollback failed on ${progress.failed.join(', ')}`
    : `rolled back on ${progress.succeeded} of ${progress.total} touched servers`;
  // The rollback's end, its notification event and (an automatic one's) its entry in the trail, in one transaction.
  await inTransaction(async (session) => {
    const finished = await DeploymentRunModel.findOneAndUpdate(
      { _id: runId, 'rollback.status': 'running' },
      asChange({ $set: { 'rollback.status': progress.failed.length ? 'failed' : 'success', 'rollback.succeeded': progress.succeeded, 'rollback.failed': progress.failed.length, 'rollback.summary': summary, 'rollback.completed_at': new Date() } }),
      { session, projection: { organization_id: 1, server_id: 1, 'rollback.requested_by': 1 } },
    ).lean();
    if (!finished) return;
    await recordRunEvent(runId, 'run.rolled_back', { session });
    if (!finished.rollback?.requested_by) {
      const details = { summary, succeeded: progress.succeeded, failed: progress.failed };
      await recordRunDecision(finished, { by: 'automatic rollback', action: 'run.finish_rollback', outcome: progress.failed.length ? 'failed' : 'ok', details }, session);
    }
  });
  return summary;
}
