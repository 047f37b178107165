import { Context } from '@temporalio/activity';
import type { Logger } from '../src/logger';
import { CredentialsUnreadableError, loadSshTarget } from '../src/domain/servers/credentials';
import { credentialSecrets, loadTargetOrFail } from './ssh-target';
import { commandRecorder, isTrailFailure } from '../src/domain/audit/commands';
import * as servers from '../src/domain/servers/store';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { describeTarget } from '../src/domain/ssh/connect';
import { execRecorded } from '../src/domain/ssh/exec';
import { classifySshError } from '../src/domain/ssh/errors';
import { FINGERPRINT_COMMAND, FingerprintParseError, parseFingerprint } from '../src/domain/ssh/fingerprint';
import type { SshPool } from '../src/domain/ssh/pool';
import type { HealthCheckResult, HealthSweepResult } from '../src/domain/contracts/servers';
import { watchOrganizationServers } from '../src/domain/temporal/server-workflows';
import { failure } from '../src/domain/contracts/failure-types';
import { inLanes } from '../src/domain/lanes';

/** How many of an organization's servers its health sweep checks at once. */
const HEALTH_CHECKS_AT_ONCE = 32;
/** A sweep waiting for its next check's time says it is alive this often (its heartbeat timeout is a minute). */
const HEARTBEAT_EVERY_MS = 10_000;

/** How long a verification's fingerprint command may go without its exit before its entry counts as unknown. */
const VERIFY_COMMAND_LIMIT_SECONDS = 60;

export interface ServerActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  /** The configured interval, handed back to health monitors so a change reaches the running ones. */
  healthIntervalSeconds: number;
}

export function createServerActivities({ secretBox, sshPool, log, healthIntervalSeconds }: ServerActivityDeps) {
  /**
   * One health check (over the server's pooled connection, or a fresh login one time in five: SshPool.probe).
   * The result is written only if nothing changed the server meanwhile (a re-verification, a new pin).
   */
  async function checkHealth(serverId: string): Promise<HealthCheckResult> {
    let loaded;
    try {
      loaded = await loadSshTarget(serverId, secretBox);
    } catch (error) {
      if (!(error instanceof CredentialsUnreadableError)) throw error;
      log.error({ server: serverId }, error.message);
      return { outcome: 'skipped', intervalSeconds: healthIntervalSeconds };
    }
    if (!loaded) return { outcome: 'gone', intervalSeconds: healthIntervalSeconds };
    const { target, status } = loaded;
    if (status === 'unverified' || !target.hostKeyFingerprint) return { outcome: 'skipped', intervalSeconds: healthIntervalSeconds };
    const seen = { status, hostKey: target.hostKeyFingerprint };
    try {
      await sshPool.probe(target);
      await servers.recordHealth(serverId, seen, 'verified', null);
      return { outcome: 'verified', intervalSeconds: healthIntervalSeconds };
    } catch (error) {
      const sshError = classifySshError(error, describeTarget(target));
      // A changed host key is a trust problem, not an outage: stop treating the server as verified.
      const next = sshError.kind === 'host_key_mismatch' ? 'unverified' : 'offline';
      await servers.recordHealth(serverId, seen, next, sshError.message, sshError.kind === 'host_key_mismatch');
      if (status !== next) log.warn({ server: serverId, status: next, reason: sshError.message }, 'server health changed');
      return { outcome: 'offline', intervalSeconds: healthIntervalSeconds };
    }
  }

  return {
    /**
     * Connects, gathers the fingerprint and marks the server verified, pinning the host key it presented.
     * With trustNewHostKey the old pin is ignored for this connection only: it is replaced on success, never cleared before.
     */
    async verifyServer({ serverId, trustNewHostKey = false }: { serverId: string; trustNewHostKey?: boolean }): Promise<void> {
      const loaded = await loadTargetOrFail(serverId, secretBox);
      if (!loaded) throw failure('ServerNotFound', `Server ${serverId} no longer exists`);
      const target = { ...loaded.target, hostKeyFingerprint: trustNewHostKey ? null : loaded.target.hostKeyFingerprint };
      const { attempt, workflowExecution, activityId } = Context.current().info;
      // The fingerprint is a command Bosun runs on the server: in the audit trail like a step's.
      const record = commandRecorder({ kind: 'verification', organizationId: loaded.organizationId, serverId, ownerId: workflowExecution?.workflowId ?? activityId, stepIndex: attempt, exitAttempt: 0, startedBefore: 0, secrets: credentialSecrets(target), limitSeconds: VERIFY_COMMAND_LIMIT_SECONDS });
      // A fresh session: verification proves the credentials work now. Commands on the old one finish first.
      sshPool.evict(serverId);
      try {
        const { output, hostKey } = await sshPool.withConnection(target, async (ssh, hostKey) => ({
          output: (await execRecorded(ssh, FINGERPRINT_COMMAND, record, 'fingerprint')).stdout,
          hostKey,
        }));
        const fingerprint = parseFingerprint(output);
        await servers.markVerified(serverId, { fingerprint, hostKey });
        log.info({ server: serverId, attempt }, 'server verified');
      } catch (error) {
        if (error instanceof FingerprintParseError) throw failure('FingerprintParseError', error.message);
        // The trail could not be written (the command did not run): not the server's fault.
        if (isTrailFailure(error)) throw error;
        const sshError = classifySshError(error, describeTarget(target));
        const message = sshError.retryable ? `${sshError.message} (attempt ${attempt}, retrying)` : sshError.message;
        await servers.noteVerificationError(serverId, message);
        throw sshError.toFailure();
      }
    },

    async recordVerificationFailure({ serverId, message }: { serverId: string; message: string }): Promise<void> {
      await servers.markUnverified(serverId, message);
    },

    /** A server verified: its organization's health sweep watches it (started if none runs). */
    async watchServerHealth({ organizationId }: { organizationId: string }): Promise<void> {
      const { client, info } = Context.current();
      await watchOrganizationServers(client, info.taskQueue, organizationId, healthIntervalSeconds);
    },

    /**
     * One sweep of an organization's health: each verified or offline server checked as checkServerHealth
     * does, HEALTH_CHECKS_AT_ONCE at a time, their starts spread over half the interval (a thousand
     * servers are not a thousand logins in one second), heartbeating as each ends.
     */
    async checkServersHealth({ organizationId, intervalSeconds }: { organizationId: string; intervalSeconds: number }): Promise<HealthSweepResult> {
      const context = Context.current();
      const ids = await servers.watchedServerIds(organizationId);
      const counted = { verified: 0, offline: 0 };
      const spreadMs = (intervalSeconds * 1000) / 2;
      const startedAt = Date.now();
      const broken: unknown[] = [];
      await inLanes(ids, HEALTH_CHECKS_AT_ONCE, async (serverId, index) => {
        // Its start, spread over the interval's first half; heartbeating while it waits (an interval may be long).
        const dueAt = startedAt + (index * spreadMs) / ids.length;
        while (Date.now() < dueAt) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(dueAt - Date.now(), HEARTBEAT_EVERY_MS)));
          context.heartbeat();
        }
        try {
          const { outcome } = await checkHealth(serverId);
          if (outcome === 'verified' || outcome === 'offline') counted[outcome] += 1;
        } catch (error) {
          // The check itself broke (the database), not the server: the others go on, this one is checked next sweep.
          broken.push(error);
          log.warn({ server: serverId, err: (error as Error).message }, 'health check could not be made');
        }
        context.heartbeat();
      });
      // Nothing could be checked: the sweep fails (and is retried), as Temporal's UI then shows.
      if (ids.length > 0 && broken.length === ids.length) throw broken[0];
      return { checked: ids.length, ...counted, intervalSeconds: healthIntervalSeconds };
    },

    /** One health check of one server (a health workflow of its own, started before the organizations' sweeps). */
    checkServerHealth: ({ serverId }: { serverId: string }): Promise<HealthCheckResult> => checkHealth(serverId),
  };
}

export type ServerActivities = ReturnType<typeof createServerActivities>;
