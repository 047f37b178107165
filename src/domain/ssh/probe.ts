import type { NodeSSH } from 'node-ssh';
import { describeTarget, type SshTarget } from './connect';
import { classifySshError, SshError } from './errors';

/** A health probe's command: `true`, answered within timeoutMs with exit 0, or an SshError saying what did not. */
export async function runTrue(ssh: NodeSSH, target: SshTarget, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SshError('timeout', `${describeTarget(target)} did not run a command within ${timeoutMs} ms`)), timeoutMs);
    });
    const result = await Promise.race([ssh.execCommand('true'), timeout]);
    if (result.code !== 0) {
      throw new SshError('transport', `${describeTarget(target)} accepted the login but could not run a command (exit ${result.code})`);
    }
  } catch (error) {
    throw classifySshError(error, describeTarget(target));
  } finally {
    clearTimeout(timer);
  }
}
