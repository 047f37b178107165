import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import type { WorkflowGateway } from '../../domain/temporal/client';
import { closeRun, requestCancel } from '../../domain/deployments/runs';
import { FINAL_RUN_STATUSES, type RunStatus } from '../../domain/deployments/model';
import type { RunReads } from './run-reads';

/** Cancels a run: a queued one never starts; a running one has its command's process group killed. Answers the run as it is then. */
export function runCanceller({ workflows, runs }: { workflows: Pick<WorkflowGateway, 'cancelRunWorkflow'>; runs: Pick<RunReads, 'findRun' | 'getRun'> }) {
  return async function cancelRun(organizationId: string, deploymentId: string, runId: string) {
    const run = await runs.findRun(organizationId, deploymentId, runId);
    if (FINAL_RUN_STATUSES.includes(run.status as RunStatus)) throw new ApiError('conflict', `The run has already finished (${run.status})`);
    // Still queued: it is simply never started (its queue skips runs that are not queued).
    const dropped = await closeRun(run._id, 'queued', 'cancelled', { cancel_requested_at: new Date() });
    if (!dropped) {
      await requestCancel(run._id);
      const found = await unlessTemporalUnreachable('cancel', () => workflows.cancelRunWorkflow(run._id.toString()));
      // Its workflow is gone (terminated by hand, or Temporal's data was reset): nothing runs it any more.
      if (!found) await closeRun(run._id, 'running', 'cancelled');
    }
    return runs.getRun(organizationId, deploymentId, runId);
  };
}
