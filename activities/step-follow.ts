import { CancelledFailure, Context } from '@temporalio/activity';
import type { StepResult } from '../src/domain/contracts/runs';
import type { StepExecution } from './step-execution';

/*
 * A step's command after its start: the activity that owns its execution (the local one that
 * started it, or the heartbeating one it was handed off to) follows it to its end.
 */

/**
 * While `body` runs, cancelling the current activity kills the execution's command: a cancellation
 * the workflow asked for ends the step; this worker's shutdown (after its grace time) hands it back.
 */
async function cancellingWith<T>(execution: StepExecution, body: () => Promise<T>, cancel: () => void = () => execution.cancel()): Promise<T> {
  const ctx = Context.current();
  const { cancellationSignal } = ctx;
  const onCancel = () => (ctx.cancellationDetails?.workerShutdown ? execution.handBack() : cancel());
  cancellationSignal.addEventListener('abort', onCancel);
  try {
    return await body();
  } finally {
    cancellationSignal.removeEventListener('abort', onCancel);
  }
}

/** The current (heartbeating) activity owns the execution until it ends: progress, cancellation, result. */
export function follow(execution: StepExecution): Promise<StepResult> {
  const ctx = Context.current();
  execution.attach((details) => ctx.heartbeat(details));
  return cancellingWith(execution, () => execution.result);
}

/**
 * A local activity's part of a step (it cannot heartbeat): the command's result if it ends within
 * `handoffAfterMs`, null when it runs on (the caller hands it off). A local activity is cancelled both
 * when its run is (whose cleanup, cancelSteps, then stops what this worker holds) and when the worker
 * drops the workflow from its cache (a workflow task lost on a saturated worker: the step is run again
 * at once). So, cancelled, it keeps the command (`letGo`) and throws: it never kills it itself.
 */
export async function followLocally(execution: StepExecution, handoffAfterMs: number, letGo: () => void): Promise<StepResult | null> {
  let handoffTimer: NodeJS.Timeout | undefined;
  let release: (held: 'held') => void = () => {};
  const handoff = new Promise<null>((resolve) => {
    handoffTimer = setTimeout(() => resolve(null), handoffAfterMs);
  });
  const held = new Promise<'held'>((resolve) => (release = resolve));
  const keep = () => {
    letGo();
    release('held');
  };
  const finished = await cancellingWith(execution, () => Promise.race([execution.result, handoff, held]), keep).finally(() => clearTimeout(handoffTimer));
  if (finished === 'held') throw new CancelledFailure('The step was let go: its command kept for its attempt run again, or for the cancel that stops it');
  return finished;
}
