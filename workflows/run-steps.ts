import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployment-steps';
import { DEFAULT_STEP_LIMIT_SECONDS, serverLabel, STEP_HANDOFF_AFTER_MS, type FrozenHold, type QueuedRun, type RunResult, type StepFailureDetails, type RunStepDefinition, type StepAttempt, type StepResult } from '../src/domain/contracts/runs';
import { failure as failureOf, NON_RETRYABLE_FAILURES, rerunsElsewhere } from '../src/domain/contracts/failure-types';
import { endsAsItsOutcome, firstLine, messageOf, RECORDED_WITHOUT_RESULT } from './failures';
import { bookkeeping, endAsRecorded } from './run-activities';
import { freezesChangedSignal, untilFreezeMayLift } from './fleet-guards';
import { isPatched, PATCHES } from './patches';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';

/**
 * A one-server run held by a change freeze checks again when the freeze should lift, at once when a
 * freeze changes (the API signals it), and at least this often (a signal lost: a freeze edited while
 * Temporal could not be reached). Half an hour keeps a month-long freeze's wait to a few thousand
 * history events.
 */
const ONE_SERVER_FREEZE_RECHECK_MS = 30 * 60_000;

/**
 * Before a one-server run's first step: while change freezes cover its server the run holds (status
 * frozen, holding its server's turn: every other run there is frozen too, unless triggered with an
 * override), and goes on when they lift. A durable wait: a cancel ends it.
 */
async function holdWhileFrozen(run: QueuedRun, server: string, held: FrozenHold): Promise<void> {
  let changed = false;
  setHandler(freezesChangedSignal, () => {
    changed = true;
  });
  for (let frozen: FrozenHold | null = held; frozen; ) {
    setCurrentDetails(`frozen by ${frozen.names.join(', ')} until ${new Date(frozen.until).toISOString()}: waits to start on ${server}`);
    changed = false;
    await untilFreezeMayLift(frozen, ONE_SERVER_FREEZE_RECHECK_MS, () => changed);
    frozen = await bookkeeping.holdIfFrozen({ runId: run.runId });
  }
}

/** Transport failures retry with backoff for about 45 s (a server that does not answer: within 2× the connect timeout, activities/step-run.ts); an exit code is not a transport failure. */
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

const followingOptions = (step: RunStepDefinition, taskQueue: string): ActivityOptions => ({
  taskQueue,
  // A worker that died leaves its task queue unpolled: give up as soon as on a lost heartbeat and run the command again.
  scheduleToStartTimeout: HEARTBEAT_TIMEOUT_MS,
  startToCloseTimeout: backstop(step),
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  cancellationType: WAIT_CANCELLATION_COMPLETED,
  retry: { maximumAttempts: 1 },
});

/** A step whose command was lost with its worker runs again, on any worker, as a heartbeating activity. */
const rerunOptions = (step: RunStepDefinition): ActivityOptions => ({
  startToCloseTimeout: backstop(step),
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  cancellationType: WAIT_CANCELLATION_COMPLETED,
  retry: transportRetry,
});
// Each call gives its own options (above): the task queue, limits and summary depend on the step.
const following = proxyActivities<DeploymentActivities>({ startToCloseTimeout: '1 minute' });

/**
 * One attempt at a step's command, wherever it ends up running; each activity named after the step in
 * the Temporal UI (and its server, in a workflow running several targets).
 */
async function runStepAttempt(step: RunStepDefinition, attempt: StepAttempt, summary: string): Promise<StepResult> {
  const outcome = await firstActivity.startStep.executeWithOptions({ summary }, [{ ...attempt, handoffAfterMs: STEP_HANDOFF_AFTER_MS }]);
  if (!('handedOff' in outcome)) return outcome;
  try {
    return await following.awaitStep.executeWithOptions({ ...followingOptions(step, outcome.handedOff), summary }, [attempt]);
  } catch (error) {
    if (isCancellation(error) || !lostWithItsWorker(error)) throw error;
    return following.runStep.executeWithOptions({ ...rerunOptions(step), summary }, [attempt]);
  }
}

/**
 * Where a run's steps run: in its own workflow (whose details say where the run is), or in one it
 * shares with other targets (a target group's, whose details are the group's: `report` is silent).
 */
export interface RunPlaceInWorkflow {
  shared: boolean;
  report: (details: string) => void;
}

export const OWN_WORKFLOW: RunPlaceInWorkflow = { shared: false, report: setCurrentDetails };
export const SHARED_WORKFLOW: RunPlaceInWorkflow = { shared: true, report: () => undefined };

/**
 * A run in a shared workflow that found its run ended before it began: it ends as the run did, that
 * run alone (a cancelled run's CancelledFailure is its own, not its workflow's).
 */
async function endSharedAsRecorded(runId: string): Promise<RunResult> {
  const ended = await bookkeeping.endedRun({ runId });
  if (ended?.status === 'success') return { status: 'success', steps: 0, duration_seconds: 0 };
  if (ended?.status === 'failed') throw failureOf('DeploymentRunFailed', ended.error ?? 'The run failed before it began');
  throw new CancelledFailure('Cancelled while queued');
}

/** The worker following the command died (or restarted): nobody is watching it any more. */
function lostWithItsWorker(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  if (cause instanceof TimeoutFailure) return true;
  // StepNotHeld (this worker restarted), a lost connection, a database error: anything a rerun can fix.
  return cause instanceof ApplicationFailure && rerunsElsewhere(cause.type);
}

/** Why a step failed, in one line a person reads in the API, the CLI and the Temporal UI. */
function stepFailureLine(step: RunStepDefinition, index: number, total: number, server: string, why: string) {
  return `Step "${step.name}" (${index + 1}/${total}) failed on ${server}: ${why}`;
}

function exitReason(step: RunStepDefinition, result: StepResult) {
  const tries = step.retries > 0 ? ` (after ${step.retries + 1} attempts)` : '';
  if (result.outputsError) return `${result.outputsError}${tries}`;
  if (result.timedOut) return `timed out after ${step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS} s${tries}`;
  return result.exitCode === null ? `the command ended without an exit code${tries}` : `exit code ${result.exitCode}${tries}`;
}

const secondsSince = (startedAt: number) => Math.round((Date.now() - startedAt) / 1000);

/**
 * A run's steps on its server, from its begin to its end (a one-server run's, or a fleet target's):
 * each step is one SSH activity. A step that exits non-zero is run again up to its `retries`; a
 * failed step skips the rest unless it has `continue_on_error`. Cancelling the workflow stops the
 * running command and cancels the remaining steps. `begun`: the steps of a run its caller began
 * already (null when it had ended).
 *
 * The workflow's outcome is the run's: it completes when the run succeeded, fails (not retried) with
 * the first failed step, its server and exit code when the run failed, and is cancelled when it was.
 */
export async function executeRun(run: QueuedRun, begun?: RunStepDefinition[] | null, held: FrozenHold | null = null, place = OWN_WORKFLOW): Promise<RunResult> {
  const startedAt = Date.now();
  const server = serverLabel(run);
  // Not cancellable: once the run is marked running, the cancel must go through the cleanup below.
  let steps: RunStepDefinition[] | null;
  let frozen = held;
  if (begun !== undefined) steps = begun;
  else if (isPatched(PATCHES.oneServerRunFreezes)) ({ steps, frozen } = await CancellationScope.nonCancellable(() => bookkeeping.beginOneServerRun({ runId: run.runId })));
  else steps = await CancellationScope.nonCancellable(() => bookkeeping.beginRun({ runId: run.runId }));
  if (!steps) {
    if (place.shared) return endSharedAsRecorded(run.runId);
    if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
    // Closed before this workflow began (cancelled while queued, or by a sweep): end as the run did.
    return endAsRecorded(run.runId, { status: 'success', steps: 0, duration_seconds: 0 });
  }
  let failure: { message: string; details: StepFailureDetails } | null = null;
  const fail = (index: number, why: string, exitCode: number | null) => {
    const step = steps[index]!;
    failure ??= {
      message: stepFailureLine(step, index, steps.length, server, why),
      details: { step: step.name, index, server, exit_code: exitCode },
    };
  };
  // The last step's success ended the run with it (one write): no finishRun.
  let endedByLastStep = false;
  try {
    if (frozen) await holdWhileFrozen(run, server, frozen);
    if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled before the first step');
    for (let index = 0; index < steps.length; index += 1) {
      const step = steps[index]!;
      // Succeeded in the run this one retries.
      if (step.skip) continue;
      place.report(`step ${index + 1}/${steps.length} ${step.name} running on ${server}`);
      const endsRun = index === steps.length - 1 && failure === null;
      let result: StepResult;
      try {
        let attempt = 0;
        do {
          const attemptInput: StepAttempt = { runId: run.runId, serverId: run.serverId, organizationId: run.organizationId, index, exitAttempt: attempt, finalExitAttempt: attempt === step.retries };
          result = await runStepAttempt(step, endsRun ? { ...attemptInput, endsRun } : attemptInput, place.shared ? `${step.name} on ${server}` : step.name);
          endedByLastStep = result.endedRun === true;
          attempt += 1;
        } while (result.status === 'failed' && attempt <= step.retries);
      } catch (stepError) {
        if (isCancellation(stepError)) throw stepError;
        // The server could not be reached or refused us: nothing later can run either.
        await bookkeeping.failRunStep({ runId: run.runId, index, message: messageOf(stepError) });
        fail(index, firstLine(messageOf(stepError)), null);
        await bookkeeping.skipSteps({ runId: run.runId, from: index + 1 });
        break;
      }
      if (result.status === 'failed') {
        fail(index, exitReason(step, result), result.exitCode);
        if (!step.continue_on_error) {
          await bookkeeping.skipSteps({ runId: run.runId, from: index + 1 });
          break;
        }
      }
    }
  } catch (runError) {
    if (!isCancellation(runError)) throw runError;
    await CancellationScope.nonCancellable(async () => {
      await bookkeeping.cancelSteps({ runId: run.runId });
      await bookkeeping.finishRun({ runId: run.runId, status: 'cancelled', error: null });
    });
    place.report(`cancelled after ${secondsSince(startedAt)} s`);
    if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
    throw runError;
  }
  const failed = failure as { message: string; details: StepFailureDetails } | null;
  if (!endedByLastStep) await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: failed ? 'failed' : 'success', error: failed?.message ?? null }));
  if (failed) {
    place.report(`failed: ${failed.message}`);
    if (!endsAsItsOutcome()) return RECORDED_WITHOUT_RESULT;
    throw failureOf('DeploymentRunFailed', failed.message, { details: [failed.details] });
  }
  place.report(`succeeded: ${steps.length} steps on ${server} in ${secondsSince(startedAt)} s`);
  return { status: 'success', steps: steps.length, duration_seconds: secondsSince(startedAt) };
}
