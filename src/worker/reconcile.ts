import { triggeredByText } from '../domain/access/actor';
import type { Types } from 'mongoose';
import { deploymentRunWorkflowId, fleetTargetWorkflowId } from '../domain/contracts/workflow-ids';
import { BEGUN_RUN_STATUSES, DeploymentModel, DeploymentRunModel } from '../domain/deployments/model';
import { closeRun } from '../domain/deployments/runs';
import { organizationsWithWatchedServers } from '../domain/servers/store';
import type { WorkflowGateway } from '../domain/temporal/client';
import { runStart, type StartableRun } from '../domain/temporal/run-workflows';
import type { Logger } from '../logger';
import { recordIntent, recordOutcome, systemActor } from '../domain/audit/pending-entries';
import { failOrphanedPipelineRuns, startQueuedPipelineRuns } from './pipeline-reconcile';

/**
 * Runs marked running whose workflow has ended (terminated by hand in Temporal, or its data reset)
 * are finished as failed, with the reason: nothing will ever run them again.
 */
export async function failOrphanedRuns(workflows: WorkflowGateway): Promise<number> {
  let count = 0;
  for await (const run of DeploymentRunModel.find({ status: { $in: BEGUN_RUN_STATUSES } }, { _id: 1, parent_run_id: 1, server_id: 1, organization_id: 1, workflow_id: 1 }).lean().cursor()) {
    // A fleet run's target runs in its group's workflow (recorded), or in its own (older runs, rolling windows), a child of its run's.
    const workflowId = run.workflow_id ?? (run.parent_run_id ? fleetTargetWorkflowId(run.parent_run_id.toString(), String(run.server_id)) : deploymentRunWorkflowId(run._id.toString()));
    if (await workflows.workflowOpen(workflowId)) continue;
    // A change Bosun makes by itself: in the audit trail as the system's.
    const audit = await recordIntent(
      { organizationId: String(run.organization_id), actor: systemActor('start-up reconcile'), action: 'run.fail_orphaned', target: { kind: 'run', id: run._id.toString() }, serverId: run.server_id ? String(run.server_id) : null, details: { workflow_id: workflowId } },
      300,
      `orphaned:${run._id.toString()}`,
    );
    const closed = await closeRun(run._id, 'begun', 'failed', { error: 'The run’s workflow ended without finishing it (terminated in Temporal?)' });
    await recordOutcome(audit, closed ? 'ok' : 'unchanged');
    if (closed) count += 1;
  }
  return count;
}

/**
 * Starts the workflow of every fleet run still queued (its trigger's start was lost); one already
 * started is left as it is. With `stalledForMs`, only runs queued that long.
 */
export async function startQueuedFleetRuns(workflows: WorkflowGateway, { stalledForMs }: { stalledForMs?: number } = {}): Promise<number> {
  const match: Record<string, unknown> = { status: 'queued', fleet: { $ne: null }, pipeline_run: null, ...(stalledForMs === undefined ? {} : { createdAt: { $lt: new Date(Date.now() - stalledForMs) } }) };
  let count = 0;
  for await (const run of DeploymentRunModel.find(match, { steps: 0, parameters: 0 }).lean().cursor()) {
    const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
    await workflows.runs.startFleet(
      {
        runId: run._id.toString(),
        organizationId: run.organization_id.toString(),
        deploymentId: run.deployment_id.toString(),
        deploymentName: deployment?.name ?? '(deleted)',
        triggeredBy: triggeredByText(run),
      },
      run.fleet!.total,
    );
    count += 1;
  }
  return count;
}

/**
 * For every server with runs waiting in its queue, the first of them: its workflow started if it is
 * a one-server run whose trigger's start was lost (one started already is found started), and the
 * server's queue woken for it — at a worker's start, and by the sweep after a crash between a
 * trigger's commit and its start, or a wake that never arrived. With `stalledForMs`, only servers
 * whose first waiting run has waited that long with nothing running, so a busy queue gets no signals.
 */
export async function wakeQueuedRuns(workflows: WorkflowGateway, { stalledForMs }: { stalledForMs?: number } = {}): Promise<number> {
  // Runs and targets with a place in a queue (a fleet run has none; its targets take theirs when their batch starts).
  let waiting = await DeploymentRunModel.aggregate<StartableRun & { parent_run_id: Types.ObjectId | null; server_id: Types.ObjectId; createdAt: Date }>([
    // A pipeline stage's run is started by its pipeline run's workflow, as its child.
    { $match: { status: 'queued', queue_seq: { $ne: null }, server_id: { $ne: null }, pipeline_run: null } },
    { $sort: { queue_seq: 1 } },
    { $group: { _id: '$server_id', first: { $first: '$$ROOT' } } },
    { $replaceWith: '$first' },
    { $project: { steps: 0, parameters: 0 } },
  ]);
  if (stalledForMs !== undefined) {
    const before = Date.now() - stalledForMs;
    waiting = waiting.filter((run) => run.createdAt.getTime() < before);
    const busy = new Set((await DeploymentRunModel.distinct('server_id', { status: 'running', server_id: { $in: waiting.map((w) => w.server_id) } })).map(String));
    waiting = waiting.filter((run) => !busy.has(run.server_id.toString()));
  }
  for (const run of waiting) {
    if (!run.parent_run_id) {
      const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
      await workflows.runs.start(runStart(run, deployment?.name ?? '(deleted)'));
    }
    await workflows.queues.wake(run.server_id.toString(), run.organization_id.toString(), run._id.toString());
  }
  return waiting.length;
}

/**
 * Starts the health sweep of every organization with servers to watch that lacks one (say, after
 * Temporal's data was reset; or after an upgrade, whose per-server monitors end at their next check).
 */
export async function repairHealthMonitors(workflows: WorkflowGateway): Promise<number> {
  const organizations = await organizationsWithWatchedServers();
  for (const organizationId of organizations) await workflows.servers.watchHealth(organizationId);
  return organizations.length;
}

/** At a worker's start: what a crash or a reset Temporal may have left behind, put right. */
export function reconcileAtStart(workflows: WorkflowGateway, log: Logger): Promise<void> {
  return Promise.all([repairHealthMonitors(workflows), wakeQueuedRuns(workflows), startQueuedFleetRuns(workflows), failOrphanedRuns(workflows), startQueuedPipelineRuns(workflows), failOrphanedPipelineRuns(workflows)]).then(
    ([monitors, queues, fleets, orphans, pipelines, orphanedPipelines]) =>
      log.info({ monitors, queues, fleets, orphans, pipelines, orphanedPipelines }, 'health monitors, run queues, fleet runs, pipeline runs and orphaned runs checked'),
    (err) => log.warn({ err }, 'could not check health monitors, run queues and orphaned runs'),
  );
}
