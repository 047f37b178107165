import { createHash } from 'node:crypto';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeSSH } from 'node-ssh';
import { classifySshError, SshError } from './errors';

export interface SshTarget {
  /** Identifies the server (its id); the pool keeps one connection per key. */
  key: string;
  host: string;
  port: number;
  username: string;
  privateKey?: string;
  passphrase?: string;
  password?: string;
  /** The pinned host key (trust on first use); null when none is recorded yet. */
  hostKeyFingerprint: string | null;
  /**
   * The jump host this server is reached through (`ssh -J`): the last hop of its chain, itself
   * reached through its own `via`. Absent: connected to directly.
   */
  via?: SshTarget;
}

export interface OpenedConnection {
  ssh: NodeSSH;
  hostKeyFingerprint: string;
}

export const describeTarget = (t: Pick<SshTarget, 'host' | 'port' | 'username'>) => `${t.username}@${t.host}:${t.port}`;

/** OpenSSH's notation: SHA256 of the raw public key, base64 without padding. */
export const hostKeyFingerprintOf = (key: Buffer) =>
  'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');

function openSocket(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    // node-ssh's default socket leaves Nagle on: every small exec then waits on a delayed ACK.
    socket.setNoDelay(true);
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new SshError('timeout', `Timed out after ${timeoutMs} ms connecting to ${host}:${port}`, true));
    });
    socket.once('error', reject);
  });
}

/**
 * Opens an authenticated SSH connection, refusing a host key that differs from the pinned one;
 * timeoutMs covers TCP and handshake. `through`: a stream already open to the server (a channel
 * forwarded by its jump host) instead of a TCP connection of this process's own.
 */
export async function openConnection(target: SshTarget, timeoutMs: number, through?: Duplex): Promise<OpenedConnection> {
  const where = describeTarget(target);
  const deadline = Date.now() + timeoutMs;
  let presented: string | null = null;
  try {
    const sock = through ?? (await openSocket(target.host, target.port, timeoutMs));
    const ssh = new NodeSSH();
    await ssh.connect({
      sock,
      host: target.host,
      port: target.port,
      username: target.username,
      privateKey: target.privateKey,
      passphrase: target.passphrase,
      password: target.password,
      tryKeyboard: false,
      readyTimeout: Math.max(1, deadline - Date.now()),
      keepaliveInterval: 15_000,
      // Never: a jump host must not be able to use Bosun's credentials for other servers.
      agentForward: false,
      hostVerifier: (key: Buffer) => {
        presented = hostKeyFingerprintOf(key);
        return target.hostKeyFingerprint === null || presented === target.hostKeyFingerprint;
      },
    });
    if (!presented) throw new SshError('transport', `${where} completed the handshake without a host key`);
    return { ssh, hostKeyFingerprint: presented };
  } catch (error) {
    if (presented && target.hostKeyFingerprint && presented !== target.hostKeyFingerprint) {
      throw new SshError(
        'host_key_mismatch',
        `Host key of ${where} changed: expected ${target.hostKeyFingerprint}, got ${presented}. ` +
          'This may be a man-in-the-middle attack. If the server was reinstalled, re-verify it with {"trust_new_host_key": true}.',
      );
    }
    throw classifySshError(error, where);
  }
}
