import { Context } from '@temporalio/activity';
import type { NodeSSH } from 'node-ssh';
import type { HealthAttempt, HealthAttemptResult } from '../src/domain/contracts/runs';
import { finishHealth, recordHealthAttempt } from '../src/domain/deployments/health';
import { Redactor } from '../src/domain/execution/output';
import { killProcessGroup, runInProcessGroup } from '../src/domain/ssh/exec';
import type { SshPool } from '../src/domain/ssh/pool';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { credentialSecrets, loadVerifiedServer } from './ssh-target';
import { commandRecorder, exitOutcome, isTrailFailure, sshBestEffort, type CommandRecorder } from '../src/domain/audit/commands';
import type { Logger } from '../src/logger';

/** How much of a check's output is kept per attempt: its end, where the reason usually is. */
const HEALTH_OUTPUT_CHARS = 4000;
const HEARTBEAT_MS = 2000;

export interface HealthCheckActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
}

/** A fleet target's health check after its batch: one activity per attempt, each recorded on the target. */
export function createHealthCheckActivities({ secretBox, sshPool, log }: HealthCheckActivityDeps) {
  return {
    /**
     * One attempt: the command on the target's server, stopped after `timeoutSeconds`. Exit 0 is
     * healthy (and ends the check, in the attempt's write). A lost connection is thrown (retried);
     * anything the command says is the result. Run as a local activity (a check takes milliseconds,
     * a round trip through Temporal would cost more): it heartbeats only when it is not one.
     */
    async runHealthCheck({ runId, serverId, attempt, command, timeoutSeconds }: HealthAttempt): Promise<HealthAttemptResult> {
      const { target, organizationId } = await loadVerifiedServer(serverId, secretBox);
      const secrets = credentialSecrets(target);
      const redactor = new Redactor(secrets);
      // A health check is a command Bosun runs: in the audit trail like a step's, and so is the kill of one past its timeout.
      const recorder = commandRecorder({ kind: 'health_check', organizationId, serverId, ownerId: runId, stepIndex: attempt, stepName: 'health check', exitAttempt: 0, startedBefore: 0, secrets, limitSeconds: timeoutSeconds });
      const entry = recorder.record(command);
      await entry.written();
      let output = '';
      const context = Context.current();
      const beating = setInterval(() => (context.info.isLocal ? undefined : context.heartbeat()), HEARTBEAT_MS);
      const noteKillFailure = (err: Error) => log.warn({ runId, serverId, err: err.message }, 'could not stop a health check past its timeout');
      try {
        const { exitCode, timedOut } = await sshPool
          .withConnection(target, (ssh) =>
            runTimed(ssh, { command, timeoutSeconds, recorder, noteKillFailure }, (text) => {
              output = (output + redactor.push(text)).slice(-HEALTH_OUTPUT_CHARS);
            }),
          )
          .catch(async (error: unknown) => {
            if (!isTrailFailure(error)) await entry.end('ssh_error');
            throw error;
          });
        output = (output + redactor.flush()).slice(-HEALTH_OUTPUT_CHARS);
        const healthy = exitCode === 0 && !timedOut;
        await Promise.all([
          entry.end(timedOut ? 'timed_out' : exitOutcome({ exitCode }), { exitCode }),
          recordHealthAttempt(runId, command, { attempt, at: new Date(), exit_code: exitCode, timed_out: timedOut, output }, healthy),
        ]);
        return { healthy, exitCode, timedOut, output };
      } finally {
        clearInterval(beating);
      }
    },

    /** An attempt that could not run at all (the server unreachable through the retries): recorded, with why. */
    async recordUnreachableHealthCheck({ runId, attempt, command, message }: { runId: string; attempt: number; command: string; message: string }): Promise<void> {
      await recordHealthAttempt(runId, command, { attempt, at: new Date(), exit_code: null, timed_out: false, output: `could not run the check: ${message}` });
    },

    /** The check's end: healthy, or the target failed with `error`. */
    async finishHealthCheck({ runId, healthy, error }: { runId: string; healthy: boolean; error: string | null }): Promise<void> {
      await finishHealth(runId, healthy, error);
    },
  };
}

/**
 * The check's command, stopped once it outlasts `timeoutSeconds`: its process group killed (best
 * effort over SSH, as the check fails either way; never without its entry in the trail).
 */
async function runTimed(
  ssh: NodeSSH,
  { command, timeoutSeconds, recorder, noteKillFailure }: { command: string; timeoutSeconds: number; recorder: CommandRecorder; noteKillFailure: (err: Error) => void },
  onOutput: (text: string) => void,
): Promise<{ exitCode: number | null; timedOut: boolean }> {
  let pgid: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  const running = runInProcessGroup(ssh, command, {
    onOutput,
    onProcessGroup: (group) => {
      pgid = group;
    },
  });
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutSeconds * 1000);
  });
  try {
    const ended = await Promise.race([running, late]);
    if (ended !== 'late') return { exitCode: ended.exitCode, timedOut: false };
    if (pgid !== null) await sshBestEffort(killProcessGroup(ssh, pgid, 1, recorder), noteKillFailure);
    return { exitCode: null, timedOut: true };
  } finally {
    clearTimeout(timer);
  }
}

export type HealthCheckActivities = ReturnType<typeof createHealthCheckActivities>;
