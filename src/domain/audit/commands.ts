import { failure } from '../contracts/failure-types';
import { Redactor } from '../execution/output';
import { sha256 } from './chain';
import { recordIntent, recordOutcome, systemActor } from './pending-entries';

/*
 * The one door to the trail for every command Bosun runs over SSH (a step's, a health check's, a
 * transfer's, its own fingerprints and kills): `commandRecorder` writes each command's entry before
 * it runs and its end after. No write is dropped: one MongoDB refuses twice fails the command's
 * activity (AuditTrailUnwritable, retried by Temporal), and a command whose entry is not written does
 * not run — but a kill, which runs and then fails (docs/audit.md).
 */

/** Why Bosun runs a command of its own, not a step's: its audit entry says so. */
export type CommandPurpose = 'fingerprint' | 'stop_process_group';

/** How a command ended, as far as its entry says: its exit code or signal. */
export interface CommandExit {
  exitCode: number | null;
  signal?: string | null;
}

/** A command's end in the trail: `ok` (exit 0), `failed` (another exit), or why it did not end by itself. */
export type CommandOutcome = 'ok' | 'failed' | 'timed_out' | 'cancelled' | 'interrupted' | 'ssh_error';

/** What a command's entry says about where it ran and for what. */
export interface CommandContext {
  organizationId: string;
  serverId: string;
  /**
   * A deployment run's step, a conversation's, a fleet target's health check (`stepIndex`: its
   * attempt), or a server's verification (`ownerId`: the verification's workflow, `stepIndex`: the attempt).
   */
  kind: 'run' | 'conversation' | 'health_check' | 'verification';
  /** The run's (or conversation's) id. */
  ownerId: string;
  /** The step (null: a leftover command stopped for its run, the step not known). */
  stepIndex: number | null;
  stepId?: string | null;
  stepName?: string | null;
  exitAttempt: number;
  /** How many times the step's command was started before (an interrupted attempt's rerun is another command). */
  startedBefore: number;
  /** Values never written to the trail: secrets, secret parameters, credentials. */
  secrets: readonly string[];
  /** The step's time limit: an entry still pending well after it is chained as unknown (a kill has its own). */
  limitSeconds?: number;
}

/** One command as it is recorded: its entry sent, its end to come. */
export interface RecordedCommand {
  /** Its entry acknowledged (sent once more if refused): awaited before the command starts, or before its result is recorded. */
  written(): Promise<void>;
  /** Its end (the entry written first if it was not: a kill runs regardless). Throws AuditTrailUnwritable. */
  end(outcome: CommandOutcome, exit?: CommandExit): Promise<void>;
}

/** Records the commands of one step's attempt (a check, a verification, a transfer): each one's entry and end. */
export interface CommandRecorder {
  /** Sends the command's entry now; the command runs once `written()` resolves (a step's: alongside it). */
  record(command: string, purpose?: CommandPurpose): RecordedCommand;
  /** The end of a command whose result its step recorded already, written again (an activity retried after its end's write failed). */
  settle(command: string, outcome: CommandOutcome, exit: CommandExit): Promise<void>;
}

/** The command as the trail shows it: every secret value replaced by [redacted]. */
export function redactedCommand(command: string, secrets: readonly string[]): string {
  const redactor = new Redactor(secrets);
  return redactor.push(command) + redactor.flush();
}

/** The end a command's exit is: exit 0 `ok`, another `failed`; none (it did not end normally) `interrupted`. */
export const exitOutcome = (exit: CommandExit | null): CommandOutcome => (exit === null ? 'interrupted' : exit.exitCode === 0 ? 'ok' : 'failed');

/** How long a kill of a process group (a few seconds' grace) may go without its exit before its entry counts as unknown. */
const KILL_LIMIT_SECONDS = 30;

/** How long past its limit a command's entry waits for its exit code before it counts as unknown. */
const COMMAND_GRACE_SECONDS = 300;

/** The failures raised here, told from a command's own failures by identity. */
const trailFailures = new WeakSet<Error>();
const unwritable = (error: unknown) => {
  const raised = failure('AuditTrailUnwritable', `The audit trail could not be written: ${(error as Error).message}`, { cause: error as Error });
  trailFailures.add(raised);
  return raised;
};
const throwUnwritable = (error: unknown): never => {
  throw unwritable(error);
};

/** A trail write that failed: it is never taken for the command's own failure, nor dropped with it. */
export const isTrailFailure = (error: unknown): boolean => error instanceof Error && trailFailures.has(error);

/**
 * Work that may fail over SSH without consequence (a kill over a lost connection: `noted`), never
 * over the trail: a kill whose entry could not be written is thrown.
 */
export async function sshBestEffort(work: Promise<void>, noted: (error: Error) => void): Promise<void> {
  try {
    await work;
  } catch (error) {
    if (isTrailFailure(error)) throw error;
    noted(error as Error);
  }
}

/** A command's entry: keyed by the step's attempt, so an activity retried before the command started writes nothing new. */
function commandEntry(context: CommandContext, command: string, purpose: CommandPurpose | undefined, sequence: number | undefined) {
  const text = redactedCommand(command, context.secrets);
  const { kind, ownerId, stepIndex } = context;
  const owner = kind === 'conversation' ? { conversation_id: ownerId } : kind === 'verification' ? { verification_id: ownerId } : { run_id: ownerId };
  const step = stepIndex === null ? {} : kind === 'health_check' ? { health_check_attempt: stepIndex } : kind === 'verification' ? { attempt: stepIndex } : { step: stepIndex };
  // Bosun's own commands are keyed by their text too: two kills of different process groups in one attempt are two entries.
  const own = purpose ? `:${purpose}:${sha256(command)}` : '';
  const key = `command:${kind}:${ownerId}:${context.serverId}:${stepIndex ?? '-'}:${context.exitAttempt}:${context.startedBefore}${sequence === undefined ? '' : `:${sequence}`}${own}`;
  const limitSeconds = purpose === 'stop_process_group' ? KILL_LIMIT_SECONDS : (context.limitSeconds ?? 0);
  const intent = {
    organizationId: context.organizationId,
    actor: systemActor('bosun worker'),
    action: 'command.run',
    target: { kind: 'server', id: context.serverId },
    serverId: context.serverId,
    details: {
      ...owner,
      ...step,
      ...(context.stepId ? { step_id: context.stepId } : {}),
      ...(context.stepName ? { step_name: context.stepName } : {}),
      ...(purpose ? { purpose } : {}),
      exit_attempt: context.exitAttempt,
      command: text,
      command_sha256: sha256(text),
    },
  };
  return { key, write: () => recordIntent(intent, limitSeconds + COMMAND_GRACE_SECONDS, key) };
}

/** The command's end on its entry: `outcome`, its exit code (and signal). */
const writeEnd = (key: string, outcome: CommandOutcome, exit: CommandExit = { exitCode: null }) =>
  recordOutcome(key, outcome, { details: { exit_code: exit.exitCode ?? null, ...(exit.signal ? { signal: exit.signal } : {}) } }).catch(throwUnwritable);

/**
 * The recorder of `context`'s commands (a step's attempt, a check, a verification). `sequence`: a
 * step that runs several commands (a transfer) numbers each among them.
 */
export function commandRecorder(context: CommandContext, sequence?: () => number): CommandRecorder {
  return {
    record(command, purpose) {
      const { key, write } = commandEntry(context, command, purpose, sequence?.());
      // Refused once (a primary stepping down), sent again: keyed, so never written twice. Held as a
      // value (null or the failure) until someone awaits it.
      const sent = write()
        .catch(write)
        .then(
          () => null,
          (error: unknown) => unwritable(error),
        );
      return {
        async written() {
          const failed = await sent;
          if (failed) throw failed;
        },
        async end(outcome, exit) {
          // A kill ran without its entry: the entry is written now, before its end.
          if (await sent) await write().catch(throwUnwritable);
          await writeEnd(key, outcome, exit);
        },
      };
    },
    settle: (command, outcome, exit) => writeEnd(commandEntry(context, command, undefined, undefined).key, outcome, exit),
  };
}

/**
 * Runs one command in the trail through `recorder` (none: a bare SSH helper's caller, such as a
 * test): its entry written first, its end from its exit (`interrupted` when it threw). A command
 * whose entry cannot be written does not run; a kill does (a trail that cannot be written must not
 * keep a stopped command running), and then fails unless its entry could be written after it.
 */
export async function runRecorded<T extends CommandExit>(recorder: CommandRecorder | undefined, command: string, purpose: CommandPurpose | undefined, run: () => Promise<T>): Promise<T> {
  if (!recorder) return run();
  const entry = recorder.record(command, purpose);
  if (purpose !== 'stop_process_group') await entry.written();
  let exit: T;
  try {
    exit = await run();
  } catch (error) {
    await entry.end('interrupted');
    throw error;
  }
  await entry.end(exitOutcome(exit), exit);
  return exit;
}
