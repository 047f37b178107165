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

  test.each([
    ['its first command (run in the sh its login shell started)', 0],
    ['a later command (run in its login shell, sh)', 1],
  ])('the connection lost while a silent command waits, %s: its process group is gone, and it never finishes', async (_name, before) => {
    const ssh = await connect(`lost-channel-victim-${before}`);
    for (let i = 0; i < before; i += 1) await runInProcessGroup(ssh, 'true', { onOutput: () => undefined, onProcessGroup: () => undefined });
    let pgid = 0;
    const [go, finished] = [`${dir}/go-${before}`, `${dir}/finished-${before}`];
    const running = runInProcessGroup(ssh, `while [ ! -e ${go} ]; do sleep 0.1; done; touch ${finished}`, { onOutput: () => undefined, onProcessGroup: (id) => (pgid = id) });
    running.catch(() => undefined);
    await eventually(async () => pgid && (await groupAlive(observer, pgid)), Boolean);
    // The worker's side of the connection dies at once, as with SIGKILL: no channel close is sent.
    (ssh.connection as unknown as { _sock: { destroy(): void } })._sock.destroy();
    await expect(running).rejects.toThrow(/lost/);
    await eventually(async () => groupAlive(observer, pgid), (alive) => !alive, 30_000);
    // Nothing of the group is left to see the go.
    writeFileSync(go, '');
    expect(existsSync(finished)).toBe(false);
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

  test('a connection whose login shell is sh: its first command tells so, the next run in that shell without starting another, the same', async () => {
    const ssh = await connect('login-shell-sh');
    const run = async () => {
      let output = '';
      let pgid = 0;
      const result = await runInProcessGroup(ssh, `tr '\\0' ' ' < /proc/$$/cmdline; echo; echo "$$"; no-such-command-here`, { onOutput: (text) => (output += text), onProcessGroup: (id) => (pgid = id) });
      const [cmdline, shellPid, error] = output.split('\n');
      expect([result.exitCode, Number(shellPid), error]).toEqual([127, pgid, 'sh: 1: eval: no-such-command-here: not found']);
      return cmdline!;
    };
    // The first: the login shell (sh, as the fixture's login has) execs sh for the script, which reports SHELL.
    expect(await run()).toMatch(/^sh -c __bosun_group=/);
    // The next: the login shell runs the script itself.
    expect(await run()).toMatch(/^sh -c set -- /);
    expect(await run()).toMatch(/^sh -c set -- /);
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
