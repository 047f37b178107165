import { ApplicationFailure } from '@temporalio/common';

/**
 * Every Temporal failure type Bosun raises, in one table. A type's name is recorded in workflow
 * histories and searched for in the Temporal UI (`ExecutionStatus="Failed"`, an activity's failure):
 * never rename one, only add.
 *
 * Workflows import this file too (it is one of the contracts under src/domain/contracts/, the lowest
 * layer): it holds data and builds failures, nothing else.
 */
interface FailureTypeEntry {
  /** The Temporal failure type. */
  name: string;
  /** Who raises it: an activity (its workflow sees it as the cause of an ActivityFailure) or a workflow (its own outcome). */
  raisedBy: 'activity' | 'workflow';
  /** Whether another attempt of the same activity may succeed: the failure's nonRetryable flag and the retry policies' list. */
  retryable: boolean;
  /**
   * Whether a step followed on another worker (after its hand-off) that fails with this is run again
   * elsewhere: the follower, not the command, failed. A failure of a type not in this table (a
   * database error) counts as such too.
   */
  rerunElsewhere: boolean;
  /** What it means and what to do, as a person reads it. */
  meaning: string;
}

export const FAILURE_TYPES = [
  // SSH (src/domain/ssh/errors.ts maps each kind of SshError onto one of these).
  {
    name: 'SshTransportError',
    raisedBy: 'activity',
    retryable: true,
    rerunElsewhere: true,
    meaning: 'The SSH connection failed or dropped; Bosun retries. If it persists, check that sshd runs and the host and port are right.',
  },
  {
    name: 'SshTimeout',
    raisedBy: 'activity',
    retryable: true,
    rerunElsewhere: true,
    meaning: 'Connecting over SSH timed out; Bosun retries. If it persists, check the network path to the server.',
  },
  {
    name: 'SshAuthenticationFailed',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The server rejected the credentials. Fix the server's username, password or key, then verify it again.",
  },
  {
    name: 'SshHostKeyMismatch',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The server presented another host key than the pinned one. If it was reinstalled, verify it again trusting the new key; otherwise find out who answers.',
  },
  {
    name: 'SshKeyInvalid',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The server's private key could not be used (malformed, or a wrong passphrase). Update the key or its passphrase.",
  },
  // A server's record.
  {
    name: 'ServerNotFound',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The server was deleted while work for it was under way. Nothing to retry.',
  },
  {
    name: 'ServerNotVerified',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The server has no verified host key, so nothing runs on it. Verify the server first.',
  },
  {
    name: 'CredentialsUnreadable',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "This worker cannot decrypt the server's credentials: its BOSUN_SECRET_KEY is not the one they were saved with. Start it with that key, or save the credentials again.",
  },
  {
    name: 'JumpHostUnusable',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "A jump host in the server's `via` chain has no verified host key, was deleted, or the chain is refused (a cycle, too long). Verify the jump host, or change the server's `via`.",
  },
  {
    name: 'FingerprintParseError',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The server's answer to the fingerprint command could not be read. Check that the login lands in a POSIX shell with uname and /etc/os-release.",
  },
  // A run's or a conversation's steps.
  {
    name: 'RunNotFound',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The run or its step no longer exists. Nothing to retry.',
  },
  {
    name: 'StepNotHeld',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: true,
    meaning: 'The worker following a long step no longer holds its command (it restarted). The step runs again on another worker; nothing to do.',
  },
  {
    name: 'WorkerShutdown',
    raisedBy: 'activity',
    retryable: true,
    rerunElsewhere: true,
    meaning: "The worker running the step shut down and killed the command's process group. Another worker runs it again; nothing to do.",
  },
  {
    name: 'ConversationNotFound',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The conversation no longer exists. Nothing to retry.',
  },
  {
    name: 'MessageNotFound',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The conversation has no such message. Nothing to retry.',
  },
  {
    name: 'StepNotFound',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'The conversation has no such step (or it is not a transfer). Nothing to retry.',
  },
  {
    name: 'ChangeFrozen',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: 'A change freeze covers the step’s server: the step was not run. Run it again once the freeze has lifted (GET /api/v1/freezes says when).',
  },
  // The audit trail.
  {
    name: 'AuditTrailUnwritable',
    raisedBy: 'activity',
    retryable: true,
    rerunElsewhere: true,
    meaning: "A command's entry or its end could not be written to the audit trail (MongoDB refused the write twice). Bosun retries the activity; if it persists, check MongoDB.",
  },
  // Workflows' own outcomes.
  // A config source's sync (src/domain/contracts/config-sync.ts: the code is the failure's first detail).
  {
    name: 'ConfigSourceUnreachable',
    raisedBy: 'activity',
    retryable: true,
    rerunElsewhere: true,
    meaning: "The source's repository could not be reached or did not answer in time; Bosun retries, then syncs again at its next tick. Nothing was applied.",
  },
  {
    name: 'ConfigSyncRefused',
    raisedBy: 'activity',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The sync applied nothing, for a reason a retry cannot fix (a host key to pin, credentials refused, a ref or path missing, the files' plan has errors); the source's status says which. Fix it and sync again.",
  },
  {
    name: 'PipelineRunFailed',
    raisedBy: 'workflow',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The pipeline run failed: the message names the first failed stage and why. Open that stage's deployment run.",
  },
  {
    name: 'DeploymentRunFailed',
    raisedBy: 'workflow',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The run failed: the message names the first failed step, its server and why (exit code, time limit, unreachable). Read that step's output.",
  },
  {
    name: 'ConversationFailed',
    raisedBy: 'workflow',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The conversation failed: a step failed or could not be planned; the message says which. Read the step's output, then send a follow-up.",
  },
  {
    name: 'VerificationFailed',
    raisedBy: 'workflow',
    retryable: false,
    rerunElsewhere: false,
    meaning: "The server could not be verified; its cause says why (credentials, host key, network). Fix that and verify the server again.",
  },
] as const satisfies readonly FailureTypeEntry[];

export type FailureType = (typeof FAILURE_TYPES)[number]['name'];
export type FailureTypeInfo = (typeof FAILURE_TYPES)[number];

const byName = new Map<string, FailureTypeInfo>(FAILURE_TYPES.map((entry) => [entry.name, entry]));

/** The table's entry for a failure's type; undefined for a type Bosun does not raise (a database error, a bug). */
export const failureType = (name: string | undefined | null): FailureTypeInfo | undefined => (name ? byName.get(name) : undefined);

/** Whether another attempt of the same activity may fix a failure of this type. */
export const isRetryable = (type: FailureType): boolean => byName.get(type)!.retryable;

/** Failure types an activity raises that no retry fixes, for activities' retry policies (`nonRetryableErrorTypes`). */
export const NON_RETRYABLE_FAILURES: string[] = FAILURE_TYPES.filter((entry) => entry.raisedBy === 'activity' && !entry.retryable).map((entry) => entry.name);

/** Whether a step followed on another worker that failed with this type runs again elsewhere (unknown types do). */
export const rerunsElsewhere = (name: string | undefined | null): boolean => failureType(name)?.rerunElsewhere ?? true;

/**
 * A failure of a type from the table, retryable or not as the table says; `final`: not retried
 * whatever its type (the raiser gave up), `retryAfterMs`: the next attempt's delay instead of the
 * retry policy's backoff.
 */
export function failure(type: FailureType, message: string, { final = false, retryAfterMs, ...options }: { details?: unknown[]; cause?: Error; final?: boolean; retryAfterMs?: number } = {}): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: final || !isRetryable(type), nextRetryDelay: retryAfterMs, ...options });
}
