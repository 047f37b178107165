import { commandRecorder, sshBestEffort } from '../src/domain/audit/commands';
import type { Logger } from '../src/logger';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { loadSshTarget } from '../src/domain/servers/credentials';
import { killProcessGroup } from '../src/domain/ssh/exec';
import type { SshPool } from '../src/domain/ssh/pool';
import { credentialSecrets } from './ssh-target';

/**
 * Best effort over SSH: stops commands a step left running on its server (process groups `pgids`),
 * when the step ends without its command's result (cancelled in a retry pause, given up, closed).
 * Each kill is in the audit trail, for the run or conversation (and step, when known) whose command
 * it stops; a kill the trail could not record fails the caller's activity.
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
  const recorder = commandRecorder({
    kind: owner.kind,
    organizationId: loaded.organizationId,
    serverId: serverId!.toString(),
    ownerId: owner.id,
    stepIndex: owner.stepIndex,
    exitAttempt: 0,
    startedBefore: 0,
    secrets: credentialSecrets(loaded.target),
  });
  await Promise.all(
    pgids.map((pgid) =>
      sshBestEffort(
        sshPool.withConnection(loaded.target, (ssh) => killProcessGroup(ssh, pgid, 1, recorder)),
        (err) => log.warn({ err: err.message, ...context, pgid }, 'could not stop a leftover command'),
      ),
    ),
  );
}
