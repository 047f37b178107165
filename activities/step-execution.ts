import type { StepResult } from '../src/domain/contracts/runs';
import { commandRecorder } from '../src/domain/audit/commands';
import { StepLog } from './step-log';
import { AttemptStartWrite } from './step-start-write';
import { CommandStop } from './step-stop';
import { runCommand, transportFailure } from './step-run';
import { recordAttemptResult } from './step-result';
import type { ExecutionSettings } from './step-settings';
import type { ExecutableStep, RunningAttempt, StepCommand } from './step-attempt';

export { executionSettings, type ExecutionSettings, type StepExecutionDeps } from './step-settings';
export type { ExecutableStep, StepAudit, StepCommand } from './step-attempt';

/*
 * One attempt of a step's command (a deployment run's, a conversation's), by its phases: prepared
 * here (its log, its start, its recorder in the trail, how it is stopped), run and streamed
 * (step-run.ts), its result recorded (step-result.ts), and followed by whichever activity owns it
 * (step-follow.ts).
 */

/**
 * One command of a step running on its server, independent of the activity that started it: a
 * short step finishes inside its first (local) activity; a long one is handed to a heartbeating
 * activity that attaches to it here, on the worker that holds its SSH channel.
 */
export interface StepExecution {
  /** The step's result once its final state is persisted; rejects with the failure the activity should throw. */
  readonly result: Promise<StepResult>;
  /** Kill the command's process group; `result` then rejects with a cancellation. */
  cancel(): void;
  /** This worker is shutting down: kill the command; `result` rejects with a retryable failure, so another worker runs it again. */
  handBack(): void;
  /** The activity that owns the execution now: it is called with progress while the command runs. */
  attach(heartbeat: (details: { bytes: number }) => void): void;
}

/** The recorder of an attempt's commands (`startedBefore`: how often its step's command was started before this one). */
const attemptRecorder = ({ attempt, audit, secrets, limitSeconds }: Pick<StepCommand, 'attempt' | 'audit' | 'secrets' | 'limitSeconds'>, startedBefore: number) =>
  commandRecorder({ ...audit, organizationId: attempt.organizationId, serverId: attempt.serverId, ownerId: attempt.runId, stepIndex: attempt.index, exitAttempt: attempt.exitAttempt, startedBefore, secrets, limitSeconds });

/**
 * The result this exit attempt already recorded (its worker died before reporting it), or null:
 * a finished command never runs twice.
 */
export function recordedResult(
  step: { last_exit?: { attempt?: number | null; exit_code?: number | null; timed_out?: boolean | null; outputs_error?: string | null } | null },
  exitAttempt: number,
): StepResult | null {
  const last = step.last_exit;
  if (last?.attempt !== exitAttempt) return null;
  const exitCode = last.exit_code ?? null;
  const timedOut = !!last.timed_out;
  const outputsError = last.outputs_error ?? null;
  return { status: exitCode === 0 && !timedOut && !outputsError ? 'success' : 'failed', exitCode, timedOut, ...(outputsError ? { outputsError } : {}) };
}

/**
 * `recordedResult` of a step's one command, with that command's end written to the trail again: the
 * activity that recorded the result may have failed writing it, and Temporal retried it (nothing
 * changes when it was written).
 */
export async function recordedCommandResult(
  step: ExecutableStep & Parameters<typeof recordedResult>[0],
  { attempt, audit }: Pick<StepCommand, 'attempt' | 'audit'>,
): Promise<StepResult | null> {
  const recorded = recordedResult(step, attempt.exitAttempt);
  if (!recorded) return null;
  // Its start counted it among the step's attempts: it had been started one time fewer.
  const recorder = attemptRecorder({ attempt, audit, secrets: [], limitSeconds: 0 }, (step.attempts ?? 1) - 1);
  await recorder.settle(step.command, recorded.timedOut ? 'timed_out' : recorded.exitCode === 0 ? 'ok' : 'failed', { exitCode: recorded.exitCode });
  return recorded;
}

/** Starts an attempt of the step's command; its result (or failure) comes in `result`. */
export function startStepExecution(settings: ExecutionSettings, input: StepCommand): StepExecution {
  const { attempt, step } = input;
  const { runId, index } = attempt;
  const stepLog = new StepLog(input.steps, index, step, settings, input.secrets, settings.log, { runId, index });
  // Started before and no result recorded: its worker died or its connection broke.
  if (step.started_exit_attempt === attempt.exitAttempt) {
    stepLog.note(`\n--- attempt ${(step.attempts ?? 0) + 1}: the previous attempt was interrupted; running the command again ---\n`);
  } else if (attempt.exitAttempt > 0) stepLog.note(`\n--- retry ${attempt.exitAttempt} of ${step.retries} ---\n`);

  const startedAt = step.started_at ?? new Date();
  const start = new AttemptStartWrite(stepLog, index, { startedAt, exitAttempt: attempt.exitAttempt });
  // Every command of the attempt is in the trail through its one recorder: the step's own, and Bosun's kills of it.
  const recorder = attemptRecorder(input, step.attempts ?? 0);
  const stop = new CommandStop(settings, input.target, recorder, { runId, index });
  const running: RunningAttempt = { settings, input, stepLog, start, recorder, stop };

  let heartbeat: ((details: { bytes: number }) => void) | null = null;
  const ticker = setInterval(() => {
    void stepLog.flush();
    heartbeat?.({ bytes: stepLog.bytes });
  }, settings.outputFlushMs);
  const timer = setTimeout(() => stop.ask('timeout'), input.limitSeconds * 1000);

  const result = runCommand(running)
    .then((ran) => {
      clearInterval(ticker);
      return recordAttemptResult(running, ran);
    })
    .catch(transportFailure(stepLog, settings.sshPool.connectTimeoutMs, startedAt))
    .finally(() => {
      clearInterval(ticker);
      clearTimeout(timer);
      start.cancel();
    });
  // Whoever owns the execution awaits it; until then a failure must not count as unhandled.
  result.catch(() => undefined);
  return {
    result,
    cancel: () => stop.ask('cancel'),
    handBack: () => stop.ask('shutdown'),
    attach(fn) {
      heartbeat = fn;
    },
  };
}
