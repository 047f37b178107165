import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../../src/embedded/pids';
import type { StackState } from '../../src/embedded/stack';
import { userAt } from '../support/client';
import { BosunProcess, embeddedStackEnv, runCli } from '../support/processes';
import { portForProcess } from '../support/ports';
import { sharedServices } from '../support/shared';

describe('npm start: the embedded stack', () => {
  const services = sharedServices();
  const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-home-'));
  let env: NodeJS.ProcessEnv;
  const running: BosunProcess[] = [];
  const start = (extra: NodeJS.ProcessEnv = {}) => {
    const bosun = new BosunProcess({ ...env, ...extra });
    running.push(bosun);
    return bosun;
  };
  const state = (dir = home) => JSON.parse(readFileSync(path.join(dir, 'stack.json'), 'utf8')) as StackState;

  beforeAll(async () => {
    env = await embeddedStackEnv(home);
  });
  afterAll(async () => {
    // Gracefully (a SIGKILL would orphan a stack's mongod and Temporal dev server): only those a failed test left running.
    await Promise.all(running.map((b) => b.stop('SIGINT')));
  }, 60_000);

  test('starts everything, keeps data across restarts, and recovers from a crash', async () => {
    const first = start();
    const base = await first.ready();
    const token = first.firstToken!;
    expect(token).toMatch(/^bsn_/);
    expect(first.stdout).toMatch(/Web UI http:\/\/127\.0\.0\.1:\d+/);
    // The banner points at the API reference.
    expect(first.stdout).toContain(`API docs    ${base.replace(/\/api\/v1$/, '')}/docs`);
    const { mongo, temporal } = state();
    expect(isAlive(mongo!.pid) && isAlive(temporal!.pid)).toBe(true);

    // The CLI finds the embedded database through BOSUN_HOME alone.
    const { MONGOD_PATH: _p, ...cliEnv } = env;
    const cliToken = await runCli(['tokens', 'create', '--org', 'default', '--name', 'from-cli', '--scopes', 'read'], cliEnv);
    expect(cliToken.code).toBe(0);
    await userAt(base, cliToken.stdout.trim()).listServers();

    const id = await userAt(base, token).addServer({ host: '127.0.0.7', title: 'survivor' });
    expect(services.sshd.host).toBe('127.0.0.1'); // the fixture's own address; this server uses another loopback one

    // A second Bosun on the same home is refused while the first runs.
    const twin = start();
    expect(await twin.exited).toBe(1);
    expect(twin.stderr).toContain('already running with BOSUN_HOME');

    // Ctrl-C stops every child process and removes the lock.
    expect(await first.stop('SIGINT')).toBe(0);
    // A whole start and stop logged no warning about how Bosun is built (its hand-off worker polls no workflows).
    expect(first.stdout + first.stderr).not.toContain('No workflows registered');
    expect(isAlive(mongo!.pid) || isAlive(temporal!.pid)).toBe(false);
    expect(existsSync(path.join(home, 'stack.json'))).toBe(false);

    const second = start();
    const base2 = await second.ready();
    expect(second.firstToken).toBeUndefined();
    expect(await userAt(base2, token).getServer(id)).toMatchObject({ title: 'survivor', status: 'verified' });

    // A crash (no handler runs) leaves stack.json and, where the kernel's parent-death signal is not
    // available, mongod and Temporal behind; the next start stops whatever is left and carries on.
    const orphans = state();
    await second.stop('SIGKILL');
    expect(existsSync(path.join(home, 'stack.json'))).toBe(true);
    const third = start();
    const base3 = await third.ready();
    expect(isAlive(orphans.mongo!.pid) || isAlive(orphans.temporal!.pid)).toBe(false);
    expect((await userAt(base3, token).getServer(id)).title).toBe('survivor');
    expect(third.stderr + third.stdout).toContain('recovered from an unclean shutdown');

    // A second stack with its own home moves off the ports the first one holds.
    const otherHome = mkdtempSync(path.join(os.tmpdir(), 'bosun-home-'));
    const { PORT: _port, ...withoutPort } = env;
    const neighbour = new BosunProcess({ ...withoutPort, BOSUN_HOME: otherHome, PORT: undefined });
    running.push(neighbour);
    const neighbourBase = await neighbour.ready();
    const ours = state();
    const theirs = state(otherHome);
    expect(theirs.mongo!.port).not.toBe(ours.mongo!.port);
    expect(theirs.temporal!.port).not.toBe(ours.temporal!.port);
    expect(neighbourBase).not.toBe(base3);
    expect(await neighbour.stop()).toBe(0);
    expect(await third.stop()).toBe(0);

    // The same home on another MongoDB port: the replica set is repointed and the data is all there.
    const moved = start({ MONGO_PORT: String(await portForProcess()) });
    const base4 = await moved.ready();
    expect(state().mongo!.port).not.toBe(ours.mongo!.port);
    expect(await userAt(base4, token).getServer(id)).toMatchObject({ title: 'survivor', status: 'verified' });
    expect(await moved.stop()).toBe(0);
  }, 300_000);

  test('after a crash whose leftovers outlived it (no parent-death signal): they are stopped, a recycled pid is left alone', async () => {
    // A crashed Bosun's stack.json: its mongod is a live process whose arguments name this home's data
    // path (as --dbpath does); its Temporal's pid now belongs to a bystander whose arguments do not.
    const leftoverHome = mkdtempSync(path.join(os.tmpdir(), 'bosun-home-'));
    const idle = (...args: string[]) => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...args], { stdio: 'ignore' });
    const mongoLeftover = idle(path.join(leftoverHome, 'mongo'));
    const bystander = idle(path.join(os.tmpdir(), 'somebody-else'));
    // The crashed Bosun itself is a zombie nobody reaps (as under a pid 1 that reaps no orphans):
    // signal 0 still reaches it, yet it must not count as a Bosun running here.
    // (A parent that never waits: python's fork leaves the exited child a zombie; a shell would reap it.)
    const reaperless = spawn('python3', ['-c', 'import os, sys, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const zombie = Number(await new Promise<string>((resolve) => reaperless.stdout!.once('data', (chunk) => resolve(String(chunk)))));
    while (!readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z ')) await new Promise((resolve) => setTimeout(resolve, 20));
    try {
      writeFileSync(
        path.join(leftoverHome, 'stack.json'),
        JSON.stringify({ pid: zombie, mongo: { pid: mongoLeftover.pid, port: 1 }, temporal: { pid: bystander.pid, port: 1, uiPort: 1 } }),
      );
      const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
      const bosun = start({ BOSUN_HOME: leftoverHome, PORT: String(await portForProcess()) });
      await bosun.ready();
      await exited(mongoLeftover);
      expect(mongoLeftover.signalCode).toBe('SIGTERM');
      expect(bystander.exitCode === null && bystander.signalCode === null).toBe(true);
      expect(bosun.stderr + bosun.stdout).toContain('recovered from an unclean shutdown');
      expect(await bosun.stop()).toBe(0);
    } finally {
      for (const child of [mongoLeftover, bystander, reaperless]) child.kill('SIGKILL');
    }
  }, 120_000);

  test('an invalid setting stops start-up with a message naming the variable', async () => {
    const bad = start({ PORT: 'eighty' });
    expect(await bad.exited).toBe(2);
    expect(bad.stderr).toContain('PORT');
  });

  test('a binary that is not there is reported with what to do', async () => {
    const bad = start({ BOSUN_HOME: mkdtempSync(path.join(os.tmpdir(), 'bosun-home-')), MONGOD_PATH: '/nonexistent/mongod' });
    expect(await bad.exited).toBe(1);
    expect(bad.stderr).toContain('MONGOD_PATH=/nonexistent/mongod is not an executable file');
  });
});
