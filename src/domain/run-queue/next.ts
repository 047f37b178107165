import { triggeredByText } from '../access/actor';
import type { NextRun } from '../contracts/runs';
import { deploymentRunWorkflowId, fleetTargetWorkflowId } from '../contracts/workflow-ids';
import { DeploymentModel } from '../deployments/model';
import { closeRun } from '../deployments/runs';
import { ServerModel } from '../servers/model';
import { firstPlaced } from './order';
import { takeTurn } from './turns';

/**
 * For the server's queue: the run to give the turn to next — the queued one with the lowest place —
 * with the turn taken for it (given by the queue: the queue itself waits for the run's end, which
 * does not wake it). Null when none is queued, or another run holds the turn (its end wakes the
 * queue). A run whose server was deleted is failed (it never runs) and still returned: told its
 * turn, its workflow finds it ended.
 */
export async function nextRun(serverId: string): Promise<NextRun | null> {
  const run = await firstPlaced(serverId);
  if (!run) return null;
  const turn = await takeTurn(serverId, run._id, 'queue');
  if (turn === 'busy') return null;
  if (turn === 'gone') await closeRun(run._id, 'queued', 'failed', { error: 'Not run: the server no longer exists' });
  const [deployment, server] = await Promise.all([
    DeploymentModel.findById(run.deployment_id, { name: 1 }).lean(),
    ServerModel.findById(serverId, { title: 1 }).lean(),
  ]);
  const runId = run._id.toString();
  return {
    runId,
    organizationId: run.organization_id.toString(),
    deploymentId: run.deployment_id.toString(),
    serverId,
    deploymentName: deployment?.name ?? '(deleted)',
    triggeredBy: triggeredByText(run),
    serverTitle: server?.title ?? run.server_title ?? serverId,
    workflowId: run.workflow_id ?? (run.parent_run_id ? fleetTargetWorkflowId(run.parent_run_id.toString(), serverId) : deploymentRunWorkflowId(runId)),
    fleetTarget: !!run.parent_run_id,
    ...(run.workflow_id ? { sharedWorkflow: true } : {}),
  };
}
