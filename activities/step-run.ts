import { exitOutcome, isTrailFailure, type RecordedCommand } from '../src/domain/audit/commands';
import { describeTarget } from '../src/domain/ssh/connect';
import { classifySshError, type SshError } from '../src/domain/ssh/errors';
import { runInProcessGroup, type RemoteResult } from '../src/domain/ssh/exec';
import { OUTPUT_FILE_LIMIT_BYTES } from '../src/domain/execution/output-file';
import type { RunningAttempt } from './step-attempt';
import type { StepLog } from './step-log';

/** The SSH side of a step failed (not the command, not the database). */
export class StepTransportError extends Error {
  constructor(readonly sshError: SshError) {
    super(sshError.message);
  }
}

/** What the command did: its exit, and its entry in the trail (acknowledged or on its way). */
export interface RanCommand {
  exit: RemoteResult;
  entry: RecordedCommand;
}

/**
 * Runs the step's command on its server, streaming its output into the step's log, with its entry in
 * the trail sent alongside (acknowledged before its result is recorded: a round trip off the step's
 * path); an earlier attempt's command still running is stopped first. A transport failure is thrown
 * as StepTransportError, with the command's end `ssh_error` in the trail.
 */
export async function runCommand({ settings, input, stepLog, start, recorder, stop }: RunningAttempt): Promise<RanCommand> {
  const { step, target, environment } = input;
  const entry = recorder.record(step.command);
  try {
    // An earlier attempt's command may still run on the server (its worker died): stop it first.
    if (step.pgid) await stop.earlier(step.pgid);
    const exit = await settings.sshPool.withConnection(target, (ssh) =>
      runInProcessGroup(ssh, step.command, {
        environment,
        outputFile: input.outputs ? { limitBytes: OUTPUT_FILE_LIMIT_BYTES } : undefined,
        onOutput: (text) => stepLog.push(text),
        onProcessGroup: (pgid) => {
          start.processGroup(pgid);
          stop.started(pgid);
        },
      }),
    );
    stop.ended();
    return { exit, entry };
  } catch (error) {
    stop.ended();
    if (isTrailFailure(error)) throw error;
    start.write();
    await entry.end('ssh_error');
    await stop.settled();
    throw new StepTransportError(classifySshError(error, describeTarget(target)));
  }
}

/** Why the trail says the command ended: how it was stopped, or its exit. */
export const commandOutcome = ({ stop }: RunningAttempt, exit: RemoteResult) =>
  stop.reason === 'timeout' ? 'timed_out' : stop.reason === 'cancel' ? 'cancelled' : stop.reason === 'shutdown' ? 'interrupted' : exitOutcome(exit);

/** Between two attempts at a server that does not answer (its connect timeout bounds each attempt). */
const UNREACHABLE_RETRY_MS = 1000;

/**
 * A transport failure ends the step's output with why (and whether it is retried), then is thrown as its Temporal failure; anything else (a database error) as it is: Temporal retries it, and last_exit keeps a retry from re-running.
 * A server that does not answer at all (refused, no route, no handshake) is retried a second apart while a next attempt starts within
 * twice the connect timeout of the step's start (its first attempt's), then the step fails: a dead host must not hold its batch for the whole backoff.
 */
export const transportFailure = (stepLog: StepLog, connectTimeoutMs: number, stepStartedAt: Date) => async (error: unknown) => {
  if (!(error instanceof StepTransportError)) throw error;
  const sshError = error.sshError;
  const spentMs = Date.now() - stepStartedAt.getTime();
  const givenUp = sshError.unreachable && spentMs + UNREACHABLE_RETRY_MS >= 2 * connectTimeoutMs;
  stepLog.note(`\n--- ${sshError.message}${givenUp ? `; given up after ${(spentMs / 1000).toFixed(1)} s` : sshError.retryable ? '; retrying' : ''} ---\n`);
  await stepLog.flush();
  throw sshError.toFailure(sshError.unreachable ? { final: givenUp, retryAfterMs: UNREACHABLE_RETRY_MS } : {});
};
