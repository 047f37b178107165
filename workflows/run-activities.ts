import { CancellationScope, CancelledFailure, proxyLocalActivities, setCurrentDetails } from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployment-steps';
import type { RunBookkeepingActivities } from '../activities/run-bookkeeping';
import type { RunQueueActivities } from '../activities/run-queue';
import type { WorkflowOutcomeActivities } from '../activities/workflow-outcome';
import { failure } from '../src/domain/contracts/failure-types';
import type { RunPlace, TurnOutcome } from '../src/domain/contracts/runs';

/**
 * Local activities that workflows recorded before runs took their turns (PATCHES.runsTakeTheirTurns):
 * their old branches replay them from their histories, where their results are; no worker runs them
 * any more (a local activity has no task that outlives its workflow task).
 */
interface ReplayedRunActivities {
  takeTargetTurn(place: RunPlace): Promise<TurnOutcome>;
  queueTarget(place: RunPlace): Promise<{ queued: true } | { failed: string }>;
  failQueuedTarget(input: { runId: string; error: string }): Promise<void>;
}

/**
 * A run's bookkeeping, its queue and its steps' failure paths: short database work, as local
 * activities (run by the worker that runs the workflow, with no task round trip). A retry waits on a
 * workflow timer, not inside the workflow task: a task held through backoffs times out.
 */
export const bookkeeping = proxyLocalActivities<RunBookkeepingActivities & RunQueueActivities & Pick<DeploymentActivities, 'failRunStep' | 'cancelSteps'> & ReplayedRunActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
});

export const outcome = proxyLocalActivities<WorkflowOutcomeActivities>({ startToCloseTimeout: '30 seconds' });

/**
 * A run's workflow that found its run ended before it began (cancelled while queued, failed unrun,
 * closed by a sweep) ends as the run did: Failed with its error, Completed with `success`, or
 * Cancelled (a cancel requested of itself: Temporal shows Cancelled only for a requested one).
 */
export async function endAsRecorded<T>(runId: string, success: T): Promise<T> {
  const ended = await bookkeeping.endedRun({ runId });
  setCurrentDetails(`nothing ran: the run was already ${ended?.status ?? 'gone'}`);
  if (ended?.status === 'failed') throw failure('DeploymentRunFailed', ended.error ?? 'The run failed before it began');
  if (ended?.status === 'success') return success;
  if (!CancellationScope.current().consideredCancelled) {
    await outcome.cancelOwnWorkflow();
    await CancellationScope.current().cancelRequested;
  }
  throw new CancelledFailure('Cancelled while queued');
}
