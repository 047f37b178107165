import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from '../src/logger';
import { ServerModel } from '../src/servers/model';
import { loadSshTarget } from '../src/servers/credentials';
import type { SecretBox } from '../src/secrets/secret-box';
import { classifySshError, SSH_FAILURE_TYPES } from '../src/ssh/errors';
import { FINGERPRINT_COMMAND, FingerprintParseError, parseFingerprint } from '../src/ssh/fingerprint';
import type { SshPool } from '../src/ssh/pool';
import type { HealthOutcome } from '../workflows/contracts';

export interface ServerActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
}

export function createServerActivities({ secretBox, sshPool, log }: ServerActivityDeps) {
  async function targetFor(serverId: string) {
    const target = await loadSshTarget(serverId, secretBox);
    if (!target) throw ApplicationFailure.nonRetryable(`Server ${serverId} no longer exists`, 'ServerNotFound');
    return target;
  }

  return {
    /** Connects (pinning the host key on first contact), gathers the fingerprint, marks the server verified. */
    async verifyServer({ serverId }: { serverId: string }): Promise<void> {
      const target = await targetFor(serverId);
      const { attempt } = Context.current().info;
      // A fresh connection: verification must prove the stored credentials, not reuse an old session.
      sshPool.evict(serverId);
      try {
        const { output, hostKey } = await sshPool.withConnection(target, async (ssh, hostKey) => ({
          output: (await ssh.execCommand(FINGERPRINT_COMMAND)).stdout,
          hostKey,
        }));
        const fingerprint = parseFingerprint(output);
        await ServerModel.updateOne(
          { _id: serverId },
          {
            $set: {
              status: 'verified',
              fingerprint,
              host_key_fingerprint: hostKey,
              verified_at: new Date(),
              last_checked_at: new Date(),
              last_error: null,
            },
          },
        );
        log.info({ server: serverId, attempt }, 'server verified');
      } catch (error) {
        if (error instanceof FingerprintParseError) {
          throw ApplicationFailure.nonRetryable(error.message, 'FingerprintParseError');
        }
        const sshError = classifySshError(error, `${target.username}@${target.host}:${target.port}`);
        const message = sshError.retryable ? `${sshError.message} (attempt ${attempt}, retrying)` : sshError.message;
        await ServerModel.updateOne({ _id: serverId }, { $set: { last_error: message } });
        throw ApplicationFailure.create({
          message: sshError.message,
          type: SSH_FAILURE_TYPES[sshError.kind],
          nonRetryable: !sshError.retryable,
        });
      }
    },

    async recordVerificationFailure({ serverId, message }: { serverId: string; message: string }): Promise<void> {
      await ServerModel.updateOne({ _id: serverId }, { $set: { status: 'unverified', last_error: message } });
    },

    /** One health check over a fresh connection (a pooled session would outlive a stopped sshd). */
    async checkServerHealth({ serverId }: { serverId: string }): Promise<HealthOutcome> {
      const target = await loadSshTarget(serverId, secretBox);
      if (!target) return 'gone';
      const current = await ServerModel.findById(serverId, { status: 1 }).lean();
      if (!current || current.status === 'unverified') return 'skipped';
      const now = new Date();
      try {
        await sshPool.probe(target);
        await ServerModel.updateOne({ _id: serverId }, { $set: { status: 'verified', last_checked_at: now, last_error: null } });
        return 'verified';
      } catch (error) {
        const sshError = classifySshError(error, `${target.host}:${target.port}`);
        // A changed host key is a trust problem, not an outage: stop treating the server as verified.
        const status = sshError.kind === 'host_key_mismatch' ? 'unverified' : 'offline';
        await ServerModel.updateOne({ _id: serverId }, { $set: { status, last_checked_at: now, last_error: sshError.message } });
        if (current.status !== status) log.warn({ server: serverId, status, reason: sshError.message }, 'server health changed');
        return 'offline';
      }
    },
  };
}

export type ServerActivities = ReturnType<typeof createServerActivities>;
