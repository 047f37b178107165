import type { NodeSSH } from 'node-ssh';
import { openConnection } from '../../src/domain/ssh/connect';
import type { SshdInfo } from '../support/sshd';

/*
 * The physical floor of a fleet run: the same commands on the same targets over SSH connections
 * this process opened beforehand (node-ssh, TCP_NODELAY, as Bosun's pool opens them), as many
 * targets at once as the batch size, each running its commands one after another — a rolling window,
 * what no orchestrator can beat on this machine. Timed from the first command to the last.
 */

export interface FloorTarget {
  host: string;
  sshd: SshdInfo;
}

/** Connections opened at once while setting up (each is an sshd handshake: MaxStartups stays far). */
const OPENING_AT_ONCE = 25;

export interface Floor {
  /** Wall time (ms) of every command on every target, `concurrency` targets at a time. */
  time(concurrency: number): Promise<{ ms: number; failed: number }>;
  close(): void;
}

/** Opens one connection per target (and runs a first `true` on each) before anything is timed. */
export async function openFloor(targets: FloorTarget[], commands: string[]): Promise<Floor> {
  const connections: NodeSSH[] = [];
  try {
    for (let i = 0; i < targets.length; i += OPENING_AT_ONCE) {
      await Promise.all(
        targets.slice(i, i + OPENING_AT_ONCE).map(async ({ host, sshd }) => {
          const { ssh } = await openConnection({ key: host, host, port: sshd.port, username: sshd.username, privateKey: sshd.privateKey, hostKeyFingerprint: null }, 30_000);
          connections.push(ssh);
          await ssh.execCommand('true');
        }),
      );
    }
  } catch (error) {
    connections.forEach((ssh) => ssh.dispose());
    throw error;
  }
  return {
    async time(concurrency) {
      let next = 0;
      let failed = 0;
      const lane = async () => {
        for (let i = next++; i < connections.length; i = next++) {
          for (const command of commands) {
            if ((await connections[i]!.execCommand(command)).code !== 0) failed += 1;
          }
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: Math.min(concurrency, connections.length) }, lane));
      return { ms: performance.now() - t0, failed };
    },
    close: () => connections.forEach((ssh) => ssh.dispose()),
  };
}
