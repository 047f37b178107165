import { Redactor } from '../execution/output';
import type { CommandPurpose, CommandRecorder } from '../ssh/exec';
import { sha256 } from './chain';
import { recordIntent, recordOutcome, systemActor } from './pending-entries';

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
  /** A step that runs several commands (a migration's transfer): which of this attempt's it is. */
  sequence?: number;
  command: string;
  /** One of Bosun's own commands (not the step's): the fingerprint at verification, the kill of a process group. */
  purpose?: CommandPurpose;
  /** Values never written to the trail: secrets, secret parameters, credentials. */
  secrets: readonly string[];
  /** The step's time limit: an entry still pending well after it is chained as unknown. */
  limitSeconds: number;
}

/** The command as the trail shows it: every secret value replaced by [redacted]. */
export function redactedCommand(command: string, secrets: readonly string[]): string {
  const redactor = new Redactor(secrets);
  return redactor.push(command) + redactor.flush();
}

/**
 * A command's entry, written before it starts: the server, the redacted text and the SHA-256 of that
 * text, the run (or conversation) and step. Keyed by the step's attempt, so an activity retried before
 * the command started writes nothing new. Returns the entry's id for its outcome.
 */
export async function commandStarting(context: CommandContext): Promise<string> {
  const text = redactedCommand(context.command, context.secrets);
  const owner =
    context.kind === 'conversation' ? { conversation_id: context.ownerId } : context.kind === 'verification' ? { verification_id: context.ownerId } : { run_id: context.ownerId };
  const step =
    context.stepIndex === null ? {} : context.kind === 'health_check' ? { health_check_attempt: context.stepIndex } : context.kind === 'verification' ? { attempt: context.stepIndex } : { step: context.stepIndex };
  // Bosun's own commands are keyed by their text too: two kills of different process groups in one attempt are two entries.
  const own = context.purpose ? `:${context.purpose}:${sha256(context.command)}` : '';
  const key = `command:${context.kind}:${context.ownerId}:${context.serverId}:${context.stepIndex ?? '-'}:${context.exitAttempt}:${context.startedBefore}${context.sequence === undefined ? '' : `:${context.sequence}`}${own}`;
  return recordIntent(
    {
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
        ...(context.purpose ? { purpose: context.purpose } : {}),
        exit_attempt: context.exitAttempt,
        command: text,
        command_sha256: sha256(text),
      },
    },
    context.limitSeconds + COMMAND_GRACE_SECONDS,
    key,
  );
}

/**
 * Records each command it is given as run for `context` (a step's attempt, a verification): its
 * entry written before the command starts, its exit when it ends (`interrupted` when it did not end
 * normally). The entry's write failing fails the command before it starts (a kill is logged through
 * `warn` and goes ahead); an outcome's write failing is logged.
 */
export function commandRecorder(
  context: Omit<CommandContext, 'command' | 'purpose' | 'sequence'>,
  warn: (message: string) => void,
  /** A step that runs several commands (a transfer): each command's place among them. */
  sequence?: () => number,
): CommandRecorder {
  return async (command, purpose) => {
    let id: string;
    try {
      id = await commandStarting({ ...context, command, purpose, sequence: sequence?.() });
    } catch (error) {
      // A command that is not in the trail does not run; except a kill: a trail that cannot be
      // written must not keep a leftover command running.
      if (purpose !== 'stop_process_group') throw error;
      warn(`could not record a command in the audit trail: ${(error as Error).message}`);
      return () => undefined;
    }
    return (exit) => {
      const outcome = exit === null ? 'interrupted' : exit.exitCode === 0 ? 'ok' : 'failed';
      commandEnded(id, outcome, exit ?? {}).catch((error: Error) => warn(`could not record a command's outcome in the audit trail: ${error.message}`));
    };
  };
}

/** How long a kill of a process group (a few seconds' grace) may go without its exit before its entry counts as unknown. */
export const KILL_LIMIT_SECONDS = 30;

/** How long past its limit a command's entry waits for its exit code before it counts as unknown. */
const COMMAND_GRACE_SECONDS = 300;

/** The command's end: `ok` (exit 0), `failed` (another exit code), `timed_out`, `cancelled`, `interrupted`, `ssh_error`. */
export function commandEnded(id: string, outcome: string, exit: { exitCode?: number | null; signal?: string | null } = {}): Promise<void> {
  return recordOutcome(id, outcome, { details: { exit_code: exit.exitCode ?? null, ...(exit.signal ? { signal: exit.signal } : {}) } });
}
