import { Redactor } from '../execution/output';
import { sha256 } from './chain';
import { recordIntent, recordOutcome, systemActor } from './outbox';

/** What a command's entry says about where it ran and for what. */
export interface CommandContext {
  organizationId: string;
  serverId: string;
  /** A deployment run's step, a conversation's, or a fleet target's health check (`stepIndex`: its attempt). */
  kind: 'run' | 'conversation' | 'health_check';
  /** The run's (or conversation's) id. */
  ownerId: string;
  stepIndex: number;
  stepId?: string | null;
  stepName?: string | null;
  exitAttempt: number;
  /** How many times the step's command was started before (an interrupted attempt's rerun is another command). */
  startedBefore: number;
  /** A step that runs several commands (a migration's transfer): which of this attempt's it is. */
  sequence?: number;
  command: string;
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
  const owner = context.kind === 'conversation' ? { conversation_id: context.ownerId } : { run_id: context.ownerId };
  const key = `command:${context.kind}:${context.ownerId}:${context.serverId}:${context.stepIndex}:${context.exitAttempt}:${context.startedBefore}${context.sequence === undefined ? '' : `:${context.sequence}`}`;
  return recordIntent(
    {
      organizationId: context.organizationId,
      actor: systemActor('bosun worker'),
      action: 'command.run',
      target: { kind: 'server', id: context.serverId },
      serverId: context.serverId,
      details: {
        ...owner,
        ...(context.kind === 'health_check' ? { health_check_attempt: context.stepIndex } : { step: context.stepIndex }),
        ...(context.stepId ? { step_id: context.stepId } : {}),
        ...(context.stepName ? { step_name: context.stepName } : {}),
        exit_attempt: context.exitAttempt,
        command: text,
        command_sha256: sha256(text),
      },
    },
    context.limitSeconds + COMMAND_GRACE_SECONDS,
    key,
  );
}

/** How long past its limit a command's entry waits for its exit code before it counts as unknown. */
const COMMAND_GRACE_SECONDS = 300;

/** The command's end: `ok` (exit 0), `failed` (another exit code), `timed_out`, `cancelled`, `interrupted`, `ssh_error`. */
export function commandEnded(id: string, outcome: string, exit: { exitCode?: number | null; signal?: string | null } = {}): Promise<void> {
  return recordOutcome(id, outcome, { details: { exit_code: exit.exitCode ?? null, ...(exit.signal ? { signal: exit.signal } : {}) } });
}
