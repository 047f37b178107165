import { Context } from '@temporalio/activity';
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
export async function cancellingWith<T>(execution: StepExecution, body: () => Promise<T>, cancel: () => void = () => execution.cancel()): Promise<T> {
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
