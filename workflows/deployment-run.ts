import { ActivityCancellationType, ActivityFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import { NON_RETRYABLE_FAILURES, type QueuedRun, type RunStepDefinition, type StepResult } from './contracts';

const bookkeeping = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** Transport failures retry with backoff for about 45 s; an exit code is not a transport failure. */
const stepActivities = (step: RunStepDefinition) =>
  proxyActivities<DeploymentActivities>({
    // The command's own timeout is enforced by the activity (it kills the process group); this is the backstop.
    startToCloseTimeout: `${(step.timeout_seconds ?? 6 * 3600) + 60} seconds`,
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
  const steps = await bookkeeping.beginRun({ runId: run.runId });
  if (!steps) return; // cancelled while queued, or already run: nothing to do
  let status: 'success' | 'failed' | 'cancelled' = 'success';
  let error: string | null = null;
  try {
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
