import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import {
  DEFAULT_STEP_LIMIT_SECONDS,
  NON_RETRYABLE_FAILURES,
  STEP_HANDOFF_AFTER_MS,
  type QueuedRun,
  type RunStepDefinition,
  type StepAttempt,
  type StepResult,
} from './contracts';

// Short database work: local activities, run by the worker that runs the workflow, with no task round trip.
// A retry waits on a workflow timer, not inside the workflow task: a task held through backoffs times out.
const bookkeeping = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
});

/** Transport failures retry with backoff for about 45 s; an exit code is not a transport failure. */
const transportRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 8,
  nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
} as const;

// "Cancelled" is reported only once the command's process group is really killed and its output saved.
const { WAIT_CANCELLATION_COMPLETED } = ActivityCancellationType;

/**
 * A step starts as a local activity (`startStep`): most commands finish within it, at the cost of one
 * SSH exec, three reads and two writes. One still running after STEP_HANDOFF_AFTER_MS is handed off (local activities
 * cannot heartbeat) and followed by `awaitStep` on the task queue of the worker holding it.
 */
const firstActivity = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '1 minute',
  cancellationType: WAIT_CANCELLATION_COMPLETED,
  retry: transportRetry,
  localRetryThreshold: '100 milliseconds',
});

// The activity enforces the step's limit itself (killing the process group, then failing the step);
// these backstops only catch an activity that could not, and a dead worker is found by heartbeats.
const backstop = (step: RunStepDefinition) => ((step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS) + 600) * 1000;

const following = (step: RunStepDefinition, taskQueue: string) =>
  proxyActivities<DeploymentActivities>({
    taskQueue,
    // A worker that died leaves its task queue unpolled: give up quickly and run the command again.
    scheduleToStartTimeout: '15 seconds',
    startToCloseTimeout: backstop(step),
    heartbeatTimeout: '15 seconds',
    cancellationType: WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 1 },
  });

/** A step whose command was lost with its worker runs again, on any worker, as a heartbeating activity. */
const rerun = (step: RunStepDefinition) =>
  proxyActivities<DeploymentActivities>({
    startToCloseTimeout: backstop(step),
    heartbeatTimeout: '15 seconds',
    cancellationType: WAIT_CANCELLATION_COMPLETED,
    retry: transportRetry,
  });

/** One attempt at a step's command, wherever it ends up running. */
async function runStepAttempt(step: RunStepDefinition, attempt: StepAttempt): Promise<StepResult> {
  const outcome = await firstActivity.startStep({ ...attempt, handoffAfterMs: STEP_HANDOFF_AFTER_MS });
  if (!('handedOff' in outcome)) return outcome;
  try {
    return await following(step, outcome.handedOff).awaitStep(attempt);
  } catch (error) {
    if (isCancellation(error) || !lostWithItsWorker(error)) throw error;
    return rerun(step).runStep(attempt);
  }
}

/** The worker following the command died (or restarted): nobody is watching it any more. */
function lostWithItsWorker(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  if (cause instanceof TimeoutFailure) return true;
  // StepNotHeld (this worker restarted), a lost connection, a database error: anything a rerun can fix.
  return cause instanceof ApplicationFailure && !NON_RETRYABLE_FAILURES.includes(cause.type ?? '');
}

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
      let result: StepResult;
      try {
        let attempt = 0;
        do {
          result = await runStepAttempt(step, { runId: run.runId, serverId: run.serverId, organizationId: run.organizationId, index, exitAttempt: attempt, finalExitAttempt: attempt === step.retries });
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
