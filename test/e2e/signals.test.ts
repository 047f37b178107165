import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, runEnded } from '../support/bosun';
import { userAt } from '../support/client';
import { longStep } from '../support/fixtures';
import { BosunProcess, embeddedStackEnv, externalServicesEnv, portOpen, REPO, runCli } from '../support/processes';
import { portForProcess } from '../support/ports';

/**
 * What a supervisor does (systemd, a process manager, `docker stop`, Kubernetes): one signal to the
 * pid of the process it started — here `npm start`, `npm run api`, `npm run worker` — and nothing of
 * Bosun may be left running.
 */

/** `npm run <script>` in a process group of its own, as a service manager starts it. */
class NpmRun {
  stdout = '';
  stderr = '';
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(script: string, env: NodeJS.ProcessEnv) {
    this.child = spawn('npm', ['run', '--silent', script], { cwd: REPO, env, detached: true });
    this.child.stdout!.on('data', (c) => (this.stdout += c));
    this.child.stderr!.on('data', (c) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  async ready(): Promise<string> {
    await eventually(async () => this.stdout.includes('Bosun ready') || this.child.exitCode !== null, Boolean, 120_000);
    if (!this.stdout.includes('Bosun ready')) throw new Error(`exited: ${this.stdout}\n${this.stderr}`);
    return /API\s+(http:\/\/\S+)/.exec(this.stdout)?.[1] ?? '';
  }

  /** The processes npm started itself. */
  children(): number[] {
    return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
      try {
        return Number(/^\d+ \(.*\) \S (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))![1]) === this.child.pid;
      } catch {
        return false;
      }
    });
  }

  /** Every process npm started, and theirs (Bosun's node, and what it spawned). */
  descendants(): number[] {
    const children = new Map<number, number[]>();
    for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try {
        const ppid = Number(/^\d+ \(.*\) \S (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))![1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      } catch {
        // gone meanwhile
      }
    }
    const found: number[] = [];
    const walk = (pid: number) => (children.get(pid) ?? []).forEach((child) => { found.push(child); walk(child); });
    walk(this.child.pid!);
    return found;
  }
}

/** Live processes whose command line names this path (the embedded mongod and Temporal name BOSUN_HOME). */
function processesNaming(text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
      } catch {
        return false;
      }
    })
    .map(Number);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

describe('a signal to the pid of npm stops all of Bosun', () => {
  const started: NpmRun[] = [];
  afterAll(async () => {
    for (const run of started) for (const pid of [run.child.pid!, ...run.descendants()]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  test.each(['SIGTERM', 'SIGINT'] as const)('npm start, then %s to npm: no API, mongod or Temporal of its BOSUN_HOME is left, the port is closed', async (signal) => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-signal-'));
    const env = await embeddedStackEnv(home);
    const npm = new NpmRun('start', env);
    started.push(npm);
    await npm.ready();
    const pids = npm.descendants();
    expect(processesNaming(home).length).toBeGreaterThanOrEqual(2); // mongod and the Temporal dev server
    expect(await portOpen(Number(env.PORT))).toBe(true);

    process.kill(npm.child.pid!, signal);
    await eventually(async () => ({ npm: alive(npm.child.pid!), left: [...pids, ...processesNaming(home)].filter(alive) }), (s) => !s.npm && s.left.length === 0, 30_000);
    expect(await portOpen(Number(env.PORT))).toBe(false);
    // Stopped in order, not cut off: npm and Bosun exit 0, and the stack removed its state file on its way out.
    expect((await npm.exited).code).toBe(0);
    expect(existsSync(path.join(home, 'stack.json'))).toBe(false);
  }, 180_000);

  test('npm start in a terminal, then Ctrl-C: Bosun gets SIGINT from the terminal and again from npm, and still stops in order', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-signal-'));
    const env = { ...(await embeddedStackEnv(home)), LOG_LEVEL: 'info' };
    const npm = new NpmRun('start', env);
    started.push(npm);
    await npm.ready();
    const pids = npm.descendants();
    const [bosun] = npm.children();

    // Ctrl-C signals each process of the terminal's foreground group: Bosun, and npm, which forwards
    // it to Bosun once more — here once Bosun has begun to stop, as on a busy machine.
    const stopping = new Promise<void>((resolve) => {
      const seen = () => npm.stdout.includes('"msg":"shutting down"') && resolve();
      npm.child.stdout!.on('data', seen);
      seen();
    });
    process.kill(bosun!, 'SIGINT');
    await stopping;
    process.kill(npm.child.pid!, 'SIGINT');

    await eventually(async () => [npm.child.pid!, ...pids, ...processesNaming(home)].filter(alive), (left) => left.length === 0, 30_000);
    expect(npm.stdout + npm.stderr).not.toContain('exiting without waiting');
    expect((await npm.exited).code).toBe(0);
    expect(existsSync(path.join(home, 'stack.json'))).toBe(false);
  }, 180_000);

  test('npm start, then SIGKILL to Bosun itself (npm runs it with no shell in between): its mongod and Temporal die with it', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-signal-'));
    const env = await embeddedStackEnv(home);
    const npm = new NpmRun('start', env);
    started.push(npm);
    await npm.ready();
    const services = processesNaming(home);
    expect(services.length).toBeGreaterThanOrEqual(2); // mongod and the Temporal dev server
    // npm's one child is Bosun's node: a signal npm forwards reaches Bosun, not a shell.
    const bosun = npm.children();
    expect(bosun).toHaveLength(1);
    expect(path.basename(readFileSync(`/proc/${bosun[0]}/cmdline`, 'utf8').split('\0')[0]!)).toBe('node');

    process.kill(bosun[0]!, 'SIGKILL');
    await eventually(async () => [npm.child.pid!, ...processesNaming(home)].filter(alive), (left) => left.length === 0, 30_000);
    expect(await portOpen(Number(env.PORT))).toBe(false);
  }, 180_000);

  test('npm run api / npm run worker: SIGTERM to each npm drains a running step, and nothing is left', async () => {
    const env = externalServicesEnv('signals');
    const port = await portForProcess();
    const api = new NpmRun('api', { ...env, PORT: String(port) });
    const worker = new NpmRun('worker', env);
    started.push(api, worker);
    const base = await api.ready();
    await worker.ready();
    const apiPids = api.descendants();
    const workerPids = worker.descendants();

    const token = (await runCli(['tokens', 'create', '--org', 'signals', '--name', 'ops', '--scopes', 'admin'], env)).stdout.trim();
    const ops = userAt(base, token);
    const serverId = await ops.addServer({ host: '127.0.0.10', title: 'drained' });
    const { id: deploymentId } = await ops.defineDeployment(serverId, [longStep(4, 'work')], 'drain-me');
    const { run_id: runId } = await ops.trigger(deploymentId);
    const read = () => ops.getRun(deploymentId, runId) as Promise<{ status: string; steps: Array<{ status: string; output: string }> }>;
    await eventually(read, (r) => r.steps[0]!.output.includes('begin'), 60_000);

    // The worker's npm gets SIGTERM mid-step: the worker drains (hands its step back) and exits, all of it.
    process.kill(worker.child.pid!, 'SIGTERM');
    await eventually(async () => [worker.child.pid!, ...workerPids].filter(alive), (left) => left.length === 0, 30_000);
    expect(worker.stdout + worker.stderr).toContain('shutting down');
    expect((await worker.exited).code).toBe(0);
    // The next worker carries the run to its end.
    const replacement = new BosunProcess(env, ['--role', 'worker']);
    try {
      await replacement.ready();
      const run = await eventually(read, runEnded, 60_000);
      expect(run.status).toBe('success');
      expect(run.steps[0]!.output).toMatch(/^begin\n[\s\S]*end\n$/);
    } finally {
      await replacement.stop('SIGTERM');
    }

    process.kill(api.child.pid!, 'SIGTERM');
    await eventually(async () => [api.child.pid!, ...apiPids].filter(alive), (left) => left.length === 0, 30_000);
    expect(await portOpen(port)).toBe(false);
    expect((await api.exited).code).toBe(0);
  }, 240_000);

  test('npm run api, then npm is killed outright (SIGKILL, no forwarding): Bosun sees its launcher gone and stops; the port closes', async () => {
    const port = await portForProcess();
    const api = new NpmRun('api', { ...externalServicesEnv('launcher'), PORT: String(port) });
    started.push(api);
    await api.ready();
    const pids = api.descendants();
    expect(pids.length).toBeGreaterThanOrEqual(1);

    process.kill(api.child.pid!, 'SIGKILL');
    await eventually(async () => pids.filter(alive), (left) => left.length === 0, 30_000);
    expect(await portOpen(port)).toBe(false);
  }, 120_000);

  test('a service Bosun started dies with it, even when Bosun is killed outright (SIGKILL runs no handler)', async () => {
    // Bosun's own way of starting mongod and the Temporal dev server, here for a stand-in service.
    const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'bosun-pdeath-')), 'sleeper.log');
    const script = `const { startProcess } = require('./src/embedded/child-process'); const p = startProcess('sleeper', 'sleep', ['300'], ${JSON.stringify(logFile)}); console.log(p.child.pid); setInterval(() => {}, 1000);`;
    const bosun = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    bosun.stdout!.on('data', (c) => (stdout += c));
    const service = Number((await eventually(async () => stdout, (s) => s.includes('\n'), 30_000)).trim());
    try {
      // The pid is the service itself (any wrapper execs it), as the stack's state file records it.
      const commandLine = async () => readFileSync(`/proc/${service}/cmdline`, 'utf8').split('\0').filter(Boolean);
      expect(await eventually(commandLine, (args) => args[0] === 'sleep', 10_000)).toEqual(['sleep', '300']);

      bosun.kill('SIGKILL');
      await eventually(async () => alive(service), (a) => !a, 10_000);
    } finally {
      if (bosun.exitCode === null && bosun.signalCode === null) bosun.kill('SIGKILL');
      if (alive(service)) process.kill(service, 'SIGKILL');
    }
  });
});
