import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { NodeSSH } from 'node-ssh';
import { openConnection } from '../../src/domain/ssh/connect';
import { runInProcessGroup } from '../../src/domain/ssh/exec';
import { eventually } from '../support/eventually';
import { sharedServices } from '../support/shared';

/*
 * A step's command whose SSH connection is lost (its worker killed, the network gone) stops with it,
 * against the real sshd: before, a command that wrote nothing ran on unseen and could finish on its
 * own beside the attempt that runs it again. What a command started in the background on purpose,
 * and a command that ends normally, are untouched.
 */
describe('a step’s command and its SSH channel', () => {
  const { sshd } = sharedServices();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-lost-channel-'));
  // The sshd's login may be another user than the one running the tests.
  execFileSync('chmod', ['777', dir]);
  const connect = async (key: string) =>
    (await openConnection({ key, host: sshd.host, port: sshd.port, username: sshd.username, privateKey: sshd.privateKey, hostKeyFingerprint: null }, 10_000)).ssh;
  const groupAlive = async (ssh: NodeSSH, pgid: number) => (await ssh.execCommand(`kill -0 -${pgid} 2>/dev/null && echo alive || echo gone`)).stdout.trim() === 'alive';
  let observer: NodeSSH;
  beforeAll(async () => {
    observer = await connect('lost-channel-observer');
  });
  afterAll(() => {
    observer.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the connection lost while a silent command waits: its process group is gone, and it never finishes', async () => {
    const ssh = await connect('lost-channel-victim');
    let pgid = 0;
    const running = runInProcessGroup(ssh, `while [ ! -e ${dir}/go ]; do sleep 0.1; done; touch ${dir}/finished`, { onOutput: () => undefined, onProcessGroup: (id) => (pgid = id) });
    running.catch(() => undefined);
    await eventually(async () => pgid && (await groupAlive(observer, pgid)), Boolean);
    // The worker's side of the connection dies at once, as with SIGKILL: no channel close is sent.
    (ssh.connection as unknown as { _sock: { destroy(): void } })._sock.destroy();
    await expect(running).rejects.toThrow(/lost/);
    await eventually(async () => groupAlive(observer, pgid), (alive) => !alive, 30_000);
    // Nothing of the group is left to see the go.
    writeFileSync(path.join(dir, 'go'), '');
    expect(existsSync(path.join(dir, 'finished'))).toBe(false);
  });

  test('a command that ends keeps its exit code and output; what it started in the background stays', async () => {
    const ssh = await connect('lost-channel-normal');
    let output = '';
    let pgid = 0;
    const result = await runInProcessGroup(ssh, `sleep 60 >/dev/null 2>&1 & echo "$!" > ${dir}/background; echo done; exit 4`, { onOutput: (text) => (output += text), onProcessGroup: (id) => (pgid = id) });
    expect([result.exitCode, output]).toEqual([4, 'done\n']);
    const background = (await observer.execCommand(`cat ${dir}/background`)).stdout.trim();
    // Once the channel's watcher is gone (the wrapper's end killed it), the background command alone is left in the group, alive.
    const members = async () => (await observer.execCommand(`ps -o pid= -g ${pgid} || true`)).stdout.trim().split(/\s+/).filter(Boolean);
    expect(await eventually(members, (pids) => pids.length === 1, 30_000)).toEqual([background]);
    await observer.execCommand(`kill ${background}`);
    ssh.dispose();
  });

  test('the command reads an empty stdin, as before', async () => {
    const ssh = await connect('lost-channel-stdin');
    let output = '';
    const result = await runInProcessGroup(ssh, 'cat; echo "read $?"', { onOutput: (text) => (output += text), onProcessGroup: () => undefined });
    expect([result.exitCode, output]).toEqual([0, 'read 0\n']);
    ssh.dispose();
  });
});
