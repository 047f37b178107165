import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import type { RunWorkflows } from '../../domain/temporal/run-workflows';
import type { Logger } from '../../logger';
import { closeRun, requestCancel } from '../../domain/deployments/runs';
import { FINAL_RUN_STATUSES, type RunStatus } from '../../domain/deployments/model';
import type { RunReads } from './run-reads';
import { actorOf, type Principal } from '../../domain/tokens/service';

/** Cancels a run: a queued one never starts; a running one has its command's process group killed. Answers the run as it is then. */
export function runCanceller({ workflows, runs, log }: { workflows: Pick<RunWorkflows, 'cancel'>; runs: Pick<RunReads, 'findRun' | 'getRun'>; log: Logger }) {
  return async function cancelRun(principal: Principal, deploymentId: string, runId: string) {
    const run = await runs.findRun(principal, deploymentId, runId, 'deployments:run');
    if (FINAL_RUN_STATUSES.includes(run.status as RunStatus)) throw new ApiError('conflict', `The run has already finished (${run.status})`);
    // Still queued: it never begins. Its workflow, waiting for its turn, ends now (or finds out within a minute).
    const by = actorOf(principal);
    const dropped = await closeRun(run._id, 'queued', 'cancelled', { cancel_requested_at: new Date(), cancelled_by: by });
    if (dropped) {
      workflows.cancel(run._id.toString()).catch((err: unknown) => log.warn({ err, runId: run._id.toString() }, 'could not cancel the workflow of a queued run; it ends when it next checks'));
    } else {
      await requestCancel(run._id, by);
      const found = await unlessTemporalUnreachable('cancel', () => workflows.cancel(run._id.toString()));
      // Its workflow is gone (terminated by hand, or Temporal's data was reset): nothing runs it any more.
      if (!found) await closeRun(run._id, 'begun', 'cancelled');
    }
    return runs.getRun(principal, deploymentId, runId);
  };
}
