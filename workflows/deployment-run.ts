import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import { DEFAULT_STEP_LIMIT_SECONDS, NON_RETRYABLE_FAILURES, type QueuedRun, type RunStepDefinition, type StepResult } from './contracts';

const bookkeeping = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** Transport failures retry with backoff for about 45 s; an exit code is not a transport failure. */
const stepActivities = (step: RunStepDefinition) =>
  proxyActivities<DeploymentActivities>({
    // The activity enforces the step's limit itself (killing the process group, then failing the step);
    // this backstop only catches an activity that could not, and a dead worker is found by heartbeats.
    startToCloseTimeout: `${(step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS) + 600} seconds`,
    heartbeatTimeout: '15 seconds',
    // "Cancelled" is reported only once the command's process group is really killed and its output saved.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 8,
      nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
    },
  });

const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
};

/**
 * One deployment run: each step is one SSH activity. A step that exits non-zero is run again up to
 * its `retries`; a failed step skips the rest unless it has `continue_on_error`. Cancelling the
 * workflow stops the running command and cancels the remaining steps.
 */
export async function deploymentRunWorkflow(run: QueuedRun): Promise<void> {
  // Not cancellable: once the run is marked running, the cancel must go through the cleanup below.
  const steps = await CancellationScope.nonCancellable(() => bookkeeping.beginRun({ runId: run.runId }));
  if (!steps) return; // cancelled while queued, or already run: nothing to do
  let status: 'success' | 'failed' | 'cancelled' = 'success';
  let error: string | null = null;
  try {
    if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled before the first step');
    for (let index = 0; index < steps.length; index += 1) {
      const step = steps[index]!;
      const { runStep } = stepActivities(step);
      let result: StepResult;
      try {
        let attempt = 0;
        do {
          result = await runStep({ runId: run.runId, index, exitAttempt: attempt, finalExitAttempt: attempt === step.retries });
          attempt += 1;
        } while (result.status === 'failed' && attempt <= step.retries);
      } catch (stepError) {
        if (isCancellation(stepError)) throw stepError;
        // The server could not be reached or refused us: nothing later can run either.
        error = `Step "${step.name}": ${messageOf(stepError)}`;
        await bookkeeping.failStep({ runId: run.runId, index, message: messageOf(stepError) });
        status = 'failed';
        await bookkeeping.skipSteps({ runId: run.runId, from: index + 1 });
        break;
      }
      if (result.status === 'failed') {
        status = 'failed';
        if (!step.continue_on_error) {
          await bookkeeping.skipSteps({ runId: run.runId, from: index + 1 });
          break;
        }
      }
    }
  } catch (runError) {
    if (!isCancellation(runError)) throw runError;
    status = 'cancelled';
    await CancellationScope.nonCancellable(() => bookkeeping.cancelSteps({ runId: run.runId }));
  }
  await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status, error }));
}
