import type { Types } from 'mongoose';
import { deploymentRunWorkflowId, fleetTargetWorkflowId } from '../../workflows/contracts';
import { DeploymentModel, DeploymentRunModel } from '../domain/deployments/model';
import { closeRun } from '../domain/deployments/runs';
import { ServerModel, toRef, type Server } from '../domain/servers/model';
import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';

/**
 * Runs marked running whose workflow has ended (terminated by hand in Temporal, or its data reset)
 * are finished as failed, with the reason: nothing will ever run them again.
 */
export async function failOrphanedRuns(workflows: WorkflowGateway): Promise<number> {
  let count = 0;
  for await (const run of DeploymentRunModel.find({ status: 'running' }, { _id: 1, parent_run_id: 1, server_id: 1 }).lean().cursor()) {
    // A fleet run's target has its own workflow, a child of its run's.
    const workflowId = run.parent_run_id ? fleetTargetWorkflowId(run.parent_run_id.toString(), String(run.server_id)) : deploymentRunWorkflowId(run._id.toString());
    if (await workflows.workflowOpen(workflowId)) continue;
    if (await closeRun(run._id, 'running', 'failed', { error: 'The run’s workflow ended without finishing it (terminated in Temporal?)' })) count += 1;
  }
  return count;
}

/**
 * Starts the workflow of every fleet run still queued (its trigger's start was lost); one already
 * started is left as it is. With `stalledForMs`, only runs queued that long.
 */
export async function startQueuedFleetRuns(workflows: WorkflowGateway, { stalledForMs }: { stalledForMs?: number } = {}): Promise<number> {
  const match: Record<string, unknown> = { status: 'queued', fleet: { $ne: null }, ...(stalledForMs === undefined ? {} : { createdAt: { $lt: new Date(Date.now() - stalledForMs) } }) };
  let count = 0;
  for await (const run of DeploymentRunModel.find(match, { steps: 0, parameters: 0 }).lean().cursor()) {
    const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
    await workflows.startFleetRun(
      {
        runId: run._id.toString(),
        organizationId: run.organization_id.toString(),
        deploymentId: run.deployment_id.toString(),
        deploymentName: deployment?.name ?? '(deleted)',
        triggeredBy: `API token: ${run.triggered_by}`,
      },
      run.fleet!.total,
    );
    count += 1;
  }
  return count;
}

/**
 * Wakes the queue of every server with queued runs: at a worker's start, after a crash between a
 * trigger's commit and its wake. With `stalledForMs`, only servers whose oldest queued run has waited
 * that long with nothing running (a wake that never arrived), so a busy queue gets no signals.
 */
export async function wakeQueuedRuns(workflows: WorkflowGateway, { stalledForMs }: { stalledForMs?: number } = {}): Promise<number> {
  // Runs and targets with a place in a queue (a fleet run has none; its targets take theirs when their batch starts).
  const queued = { status: 'queued', queue_seq: { $ne: null }, server_id: { $ne: null } };
  const match = stalledForMs === undefined ? queued : { ...queued, createdAt: { $lt: new Date(Date.now() - stalledForMs) } };
  let waiting = await DeploymentRunModel.aggregate<{ _id: Types.ObjectId; organization_id: Types.ObjectId }>([
    { $match: match },
    { $group: { _id: '$server_id', organization_id: { $first: '$organization_id' } } },
  ]);
  if (stalledForMs !== undefined && waiting.length) {
    const busy = await DeploymentRunModel.distinct('server_id', { status: 'running', server_id: { $in: waiting.map((w) => w._id) } });
    const busyIds = new Set(busy.map(String));
    waiting = waiting.filter((w) => !busyIds.has(w._id.toString()));
  }
  for (const server of waiting) await workflows.wakeQueue(server._id.toString(), server.organization_id.toString());
  return waiting.length;
}

/** Starts a health monitor for every watched server that lacks one (say, after Temporal's data was reset). */
export async function repairHealthMonitors(workflows: WorkflowGateway): Promise<number> {
  let count = 0;
  for await (const server of ServerModel.find({ status: { $in: ['verified', 'offline'] } }).lean<Server>().cursor()) {
    await workflows.ensureHealthMonitor(toRef(server));
    count += 1;
  }
  return count;
}

/** At a worker's start: what a crash or a reset Temporal may have left behind, put right. */
export function reconcileAtStart(workflows: WorkflowGateway, log: Logger): Promise<void> {
  return Promise.all([repairHealthMonitors(workflows), wakeQueuedRuns(workflows), startQueuedFleetRuns(workflows), failOrphanedRuns(workflows)]).then(
    ([monitors, queues, fleets, orphans]) => log.info({ monitors, queues, fleets, orphans }, 'health monitors, run queues, fleet runs and orphaned runs checked'),
    (err) => log.warn({ err }, 'could not check health monitors, run queues and orphaned runs'),
  );
}
