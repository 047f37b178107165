import { DEFAULT_STEP_LOG_LIMIT_BYTES } from '../src/domain/execution/step-logs';
import { CancelledFailure, Context } from '@temporalio/activity';
import type { Logger } from '../src/logger';
import type { SshTarget } from '../src/domain/ssh/connect';
import { describeTarget } from '../src/domain/ssh/connect';
import { classifySshError, type SshError } from '../src/domain/ssh/errors';
import { killProcessGroup, runInProcessGroup } from '../src/domain/ssh/exec';
import type { SshPool } from '../src/domain/ssh/pool';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { loadSshTarget } from '../src/domain/servers/credentials';
import type { StepAttempt, StepResult } from '../src/domain/contracts/runs';
import { failure } from '../src/domain/contracts/failure-types';
import type { AttemptResult, AttemptStart, StepTransitions } from '../src/domain/execution/steps';
import { StepLog } from './step-log';
import { commandEnded, commandRecorder, commandStarting, KILL_LIMIT_SECONDS, type CommandContext } from '../src/domain/audit/commands';
import { credentialSecrets } from './ssh-target';

/** The SSH side of a step failed (not the command, not the database). */
class StepTransportError extends Error {
  constructor(readonly sshError: SshError) {
    super(sshError.message);
  }
}

/** What every activity that runs a step's command needs: the server's credentials opened, SSH, where output goes. */
export interface StepExecutionDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  /** Per-step output kept for polling: a quarter from the start, the rest from the end. */
  stepOutputLimitBytes: number;
  /** How much of a step's output its whole log keeps (default 64 MiB). */
  stepLogLimitBytes?: number;
  /** How often streamed output is persisted (and so relayed live). */
  outputFlushMs?: number;
}

export interface ExecutionSettings {
  sshPool: SshPool;
  log: Logger;
  headLimit: number;
  tailLimit: number;
  /** How much of a step's output its whole log keeps. */
  logLimitBytes: number;
  outputFlushMs: number;
}

/** Per-step output kept for polling: a quarter of the limit from the start, the rest from the end. */
export function executionSettings({
  stepOutputLimitBytes,
  stepLogLimitBytes = DEFAULT_STEP_LOG_LIMIT_BYTES,
  ...rest
}: Omit<ExecutionSettings, 'headLimit' | 'tailLimit' | 'logLimitBytes'> & { stepOutputLimitBytes: number; stepLogLimitBytes?: number }): ExecutionSettings {
  const headLimit = Math.floor(stepOutputLimitBytes / 4);
  return { ...rest, headLimit, tailLimit: stepOutputLimitBytes - headLimit, logLimitBytes: stepLogLimitBytes };
}

/**
 * Best effort: stops commands a step left running on its server (process groups `pgids`), when the
 * step ends without its command's result (cancelled in a retry pause, given up, closed). Each kill is
 * in the audit trail, for the run or conversation (and step, when known) whose command it stops.
 */
export async function stopLeftoverCommands(
  { secretBox, sshPool, log }: { secretBox: SecretBox; sshPool: SshPool; log: Logger },
  serverId: { toString(): string } | null | undefined,
  pgids: number[],
  owner: { kind: 'run' | 'conversation'; id: string; stepIndex: number | null },
): Promise<void> {
  const loaded = serverId && pgids.length ? await loadSshTarget(serverId.toString(), secretBox).catch(() => null) : null;
  if (!loaded) return;
  const context = { [owner.kind === 'run' ? 'runId' : 'conversationId']: owner.id, step: owner.stepIndex };
  const record = commandRecorder(
    { kind: owner.kind, organizationId: loaded.organizationId, serverId: serverId!.toString(), ownerId: owner.id, stepIndex: owner.stepIndex, exitAttempt: 0, startedBefore: 0, secrets: credentialSecrets(loaded.target), limitSeconds: KILL_LIMIT_SECONDS },
    (message) => log.warn(context, message),
  );
  await Promise.all(
    pgids.map((pgid) =>
      sshPool.withConnection(loaded.target, (ssh) => killProcessGroup(ssh, pgid, 1, record)).catch((err) =>
        log.warn({ err: (err as Error).message, ...context, pgid }, 'could not stop a leftover command'),
      ),
    ),
  );
}

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

/** The step fields an execution reads; a deployment run's and a conversation's steps both have them. */
export interface ExecutableStep {
  command: string;
  output?: string | null;
  streamed?: number | null;
  retries?: number | null;
  attempts?: number | null;
  started_exit_attempt?: number | null;
  started_at?: Date | null;
  pgid?: number | null;
}

/**
 * The result this exit attempt already recorded (its worker died before reporting it), or null:
 * a finished command never runs twice.
 */
export function recordedResult(
  step: { last_exit?: { attempt?: number | null; exit_code?: number | null; timed_out?: boolean | null } | null },
  exitAttempt: number,
): StepResult | null {
  const last = step.last_exit;
  if (last?.attempt !== exitAttempt) return null;
  const exitCode = last.exit_code ?? null;
  const timedOut = !!last.timed_out;
  return { status: exitCode === 0 && !timedOut ? 'success' : 'failed', exitCode, timedOut };
}

export function startStepExecution(
  settings: ExecutionSettings,
  {
    attempt,
    step,
    target,
    environment,
    secrets,
    limitSeconds,
    steps,
    successEnds,
    failureNote = false,
    audit,
  }: {
    attempt: StepAttempt;
    step: ExecutableStep;
    target: SshTarget;
    /** Exported to the command (a deployment's parameters). */
    environment?: Record<string, string>;
    secrets: string[];
    limitSeconds: number;
    /** The step's document (a run, a conversation), written only through its transitions. */
    steps: StepTransitions;
    /**
     * What the step's success ends with it (a run's last step ends the run): the transition that
     * writes that success instead of `finishAttempt` (one write), and what follows once it is
     * written (`endedRun` in the result).
     */
    successEnds?: { finish: (index: number, result: AttemptResult) => Promise<boolean>; after: () => Promise<void> };
    /** End a failed step's output with the exit code (a conversation's execution log holds the failure details). */
    failureNote?: boolean;
    /** The command's audit entry: what ran it (a run's or a conversation's step). */
    audit: Pick<CommandContext, 'kind' | 'stepId' | 'stepName'>;
  },
): StepExecution {
  const { sshPool, log } = settings;
  const { runId, index } = attempt;
  const stepLog = new StepLog(steps, index, step, settings, secrets, log, { runId, index });

  // Started before and no result recorded: its worker died or its connection broke.
  if (step.started_exit_attempt === attempt.exitAttempt) {
    stepLog.note(`\n--- attempt ${(step.attempts ?? 0) + 1}: the previous attempt was interrupted; running the command again ---\n`);
  } else if (attempt.exitAttempt > 0) stepLog.note(`\n--- retry ${attempt.exitAttempt} of ${step.retries} ---\n`);

  // The step's start: written with its command's process group id shortly after the wrapper reports
  // it (one write, not awaited: the command runs meanwhile), or after START_WRITE_MS without it, or
  // with the result if the command ends first (a quick command's start and end are one write).
  const start: AttemptStart = { startedAt: step.started_at ?? new Date(), exitAttempt: attempt.exitAttempt };
  let startWritten = false;
  const writeStart = () => {
    if (startWritten) return;
    startWritten = true;
    clearTimeout(startTimer);
    stepLog.write((s) => s.startAttempt(index, { ...start, pgid: pgid ?? undefined })).catch(stepLog.warn('the step start'));
  };
  let startTimer = setTimeout(writeStart, START_WRITE_MS);

  let pgid: number | null = null;
  let stop: 'timeout' | 'cancel' | 'shutdown' | null = null;
  // Bosun's kills of this attempt's commands are in the trail beside the command itself.
  const recordKill = commandRecorder(
    { ...audit, organizationId: attempt.organizationId, serverId: attempt.serverId, ownerId: runId, stepIndex: index, exitAttempt: attempt.exitAttempt, startedBefore: step.attempts ?? 0, secrets, limitSeconds: KILL_LIMIT_SECONDS },
    (message) => log.warn({ runId, index }, message),
  );
  const killGroup = async () => {
    if (pgid === null) return;
    await sshPool.withConnection(target, (ssh) => killProcessGroup(ssh, pgid!, 2, recordKill)).catch((err) =>
      log.warn({ err: (err as Error).message, runId, pgid }, 'could not kill the process group'),
    );
  };

  let heartbeat: ((details: { bytes: number }) => void) | null = null;
  const ticker = setInterval(() => {
    void stepLog.flush();
    heartbeat?.({ bytes: stepLog.bytes });
  }, settings.outputFlushMs);
  const timer = setTimeout(() => {
    stop ??= 'timeout';
    void killGroup();
  }, limitSeconds * 1000);

  // Every command Bosun runs is in the audit trail: its entry is written before it starts, its exit after.
  const auditEntry = () =>
    commandStarting({
      ...audit,
      organizationId: attempt.organizationId,
      serverId: attempt.serverId,
      ownerId: runId,
      stepIndex: index,
      exitAttempt: attempt.exitAttempt,
      startedBefore: step.attempts ?? 0,
      command: step.command,
      secrets,
      limitSeconds,
    });
  let auditId: string | null = null;
  const auditEnd = (outcome: string, exit?: { exitCode?: number | null; signal?: string | null }) =>
    auditId ? commandEnded(auditId, outcome, exit).catch((err: Error) => log.warn({ err: err.message, runId, index }, 'could not record a command’s outcome in the audit trail')) : Promise.resolve();

  const run = async (): Promise<StepResult> => {
    let result;
    // Sent before the command starts, acknowledged before its result is recorded (a round trip off the step's path).
    const intent = auditEntry();
    intent.catch(() => undefined);
    try {
      // An earlier attempt's command may still run on the server (its worker died): stop it first.
      if (step.pgid) {
        const previous = step.pgid;
        await sshPool.withConnection(target, (ssh) => killProcessGroup(ssh, previous, 1, recordKill));
      }
      result = await sshPool.withConnection(target, (ssh) =>
        runInProcessGroup(ssh, step.command, {
          environment,
          onOutput: (text) => stepLog.push(text),
          onProcessGroup: (id) => {
            pgid = id;
            if (startWritten) stepLog.write((s) => s.recordProcessGroup(index, id)).catch(stepLog.warn('the process group'));
            else {
              clearTimeout(startTimer);
              startTimer = setTimeout(writeStart, PROCESS_GROUP_WRITE_MS);
            }
            if (stop) void killGroup();
          },
        }),
      );
    } catch (error) {
      writeStart();
      auditId = await intent;
      await auditEnd('ssh_error');
      throw new StepTransportError(classifySshError(error, describeTarget(target)));
    }
    clearInterval(ticker);
    auditId = await intent;
    // The command's exit in the trail is sent once the step's own result is written (or the step
    // stopped), and not waited for: it keeps off the step's path (an exit lost with its worker
    // leaves the entry `unknown`, saying so).
    const exitOutcome = stop === 'timeout' ? 'timed_out' : stop === 'cancel' ? 'cancelled' : stop === 'shutdown' ? 'interrupted' : result.exitCode === 0 ? 'ok' : 'failed';
    const exitRecorded = () => void auditEnd(exitOutcome, result);
    // A quick command that ended before its start was written: the result's write records the start
    // too (one change). A stopped one has its start written now, before its notes.
    const startInResult = !startWritten && stop === null;
    if (startInResult) {
      startWritten = true;
      clearTimeout(startTimer);
    } else writeStart();
    const succeeded = result.exitCode === 0 && stop === null;
    if (stop === 'timeout') stepLog.note(`\n--- timed out after ${limitSeconds} s: the command's process group was killed ---\n`);
    // A stopped command's step ends by throwing, without a result written.
    if (stop === 'cancel' || stop === 'shutdown') exitRecorded();
    if (stop === 'cancel') {
      stepLog.note("\n--- cancelled: the command's process group was killed ---\n");
      await stepLog.flush();
      throw new CancelledFailure('Cancelled while the command ran');
    }
    if (stop === 'shutdown') {
      stepLog.note("\n--- this Bosun worker is shutting down: the command's process group was killed; another worker runs it again ---\n");
      await stepLog.flush();
      // Killed: the next attempt has no group of this one's to stop (its id may be reused by then).
      await stepLog.write((s) => s.recordProcessGroup(index, null)).catch(stepLog.warn('the process group'));
      throw failure('WorkerShutdown', 'The worker shut down while the command ran');
    }
    if (!succeeded && !attempt.finalExitAttempt) stepLog.note(`\n--- exit code ${result.exitCode ?? result.signal}; retrying ---\n`);
    else if (!succeeded && failureNote && stop === null) stepLog.note(`\n--- failed: exit code ${result.exitCode ?? result.signal} ---\n`);
    const final = succeeded || attempt.finalExitAttempt;
    const ends = succeeded ? successEnds : undefined;
    // The last output and the result in one write: one change, one event.
    const outcome: AttemptResult = {
      succeeded,
      exitCode: result.exitCode,
      timedOut: stop === 'timeout',
      exitAttempt: attempt.exitAttempt,
      final,
      start: startInResult ? start : undefined,
      chunk: stepLog.finalChunk(),
    };
    const written = await stepLog.write((s) => (ends ? ends.finish(index, outcome) : s.finishAttempt(index, outcome))).finally(exitRecorded);
    const stepResult: StepResult = { status: succeeded ? 'success' : 'failed', exitCode: result.exitCode, timedOut: stop === 'timeout' };
    if (!ends || !written) return stepResult;
    await ends.after();
    return { ...stepResult, endedRun: true };
  };

  const result = run()
    .catch(async (error) => {
      // Anything else (a database error) is thrown as it is: Temporal retries it, and last_exit keeps a retry from re-running.
      if (!(error instanceof StepTransportError)) throw error;
      const sshError = error.sshError;
      stepLog.note(`\n--- ${sshError.message}${sshError.retryable ? '; retrying' : ''} ---\n`);
      await stepLog.flush();
      throw sshError.toFailure();
    })
    .finally(() => {
      clearInterval(ticker);
      clearTimeout(timer);
      clearTimeout(startTimer);
    });
  // Whoever owns the execution awaits it; until then a failure must not count as unhandled.
  result.catch(() => undefined);
  return {
    result,
    cancel() {
      stop ??= 'cancel';
      void killGroup();
    },
    handBack() {
      stop ??= 'shutdown';
      void killGroup();
    },
    attach(fn) {
      heartbeat = fn;
    },
  };
}

/** How long a step's start waits to be written together with its command's process group id. */
const START_WRITE_MS = 250;
/**
 * How long a step's start waits after its process group id is known, for the command to end: a
 * quick command's start is written with its result. Past this, the id is on record, so a rerun after
 * a crash stops the old command first.
 */
const PROCESS_GROUP_WRITE_MS = 40;

/**
 * While `body` runs, cancelling the current activity kills the execution's command: a cancellation
 * the workflow asked for ends the step; this worker's shutdown (after its grace time) hands it back.
 */
export async function cancellingWith<T>(execution: StepExecution, body: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const { cancellationSignal } = ctx;
  const onCancel = () => (ctx.cancellationDetails?.workerShutdown ? execution.handBack() : execution.cancel());
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
