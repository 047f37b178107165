import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { userAt, type User } from './client';
import { portForProcess } from './ports';
import { sharedServices, TEST_ENV_VAR, TEST_CLOCKS } from './shared';

export const REPO = path.resolve(__dirname, '../..');

/** The pids of processes on this machine (the tests' "servers") whose command line matches `pattern`; '' when none. */
export function processesMatching(pattern: string): string {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** Whether anything accepts TCP connections on this loopback port. */
export const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of Bosun processes on the run's shared MongoDB and Temporal, with a database and task queue of their own. */
export function externalServicesEnv(name: string): NodeJS.ProcessEnv {
  const services = sharedServices();
  const id = randomBytes(4).toString('hex');
  return {
    ...process.env,
    BOSUN_HOME: mkdtempSync(path.join(os.tmpdir(), `bosun-${name}-`)),
    BOSUN_CACHE_DIR: services.cacheDir,
    BOSUN_SECRET_KEY: randomBytes(32).toString('base64'),
    MONGODB_URI: embeddedMongoUri(services.mongoPort, `bosun_${name}_${id}`),
    TEMPORAL_ADDRESS: services.temporalAddress,
    TEMPORAL_TASK_QUEUE: `bosun-${name}-${id}`,
    // Logged at debug and searched for secrets at the end of the run (global-teardown).
    LOG_LEVEL: 'debug',
    // These files kill workers.
    ...TEST_CLOCKS,
  };
}

/**
 * The environment of `npm start` on a fresh machine, as a user has it: its own embedded mongod and
 * Temporal dev server (the run's binaries, free ports), no MONGODB_URI nor TEMPORAL_ADDRESS.
 */
export async function embeddedStackEnv(home: string): Promise<NodeJS.ProcessEnv> {
  const services = sharedServices();
  const { MONGODB_URI: _m, TEMPORAL_ADDRESS: _t, ...clean } = process.env;
  return {
    ...clean,
    BOSUN_HOME: home,
    BOSUN_CACHE_DIR: services.cacheDir,
    MONGOD_PATH: services.mongodBinary,
    TEMPORAL_CLI_PATH: services.temporalBinary,
    PORT: String(await portForProcess()),
    MONGO_PORT: String(await portForProcess()),
    TEMPORAL_PORT: String(await portForProcess()),
    TEMPORAL_UI_PORT: String(await portForProcess()),
    LOG_LEVEL: 'warn',
  };
}

/** Runs the `bosun` command as a user would (the package's bin), with the given environment; `checkout`: another copy of the repository. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, checkout = REPO): Promise<Finished> {
  return startCli(args, env, checkout).finished;
}

/**
 * The `bosun` command of another copy of the repository (an older version, for an upgrade) run from
 * its sources through tsx, as its BosunProcess is: its own bin.js would first compile a dist/ of its
 * own with that version's build (tsc then: half a minute), which is not what such a test is about.
 */
export function runCliFromSources(args: string[], env: NodeJS.ProcessEnv, checkout: string): Promise<Finished> {
  return startCli(args, env, checkout, ['--import', 'tsx', path.join(checkout, 'src/cli/index.ts')]).finished;
}

/** The `bosun` command started: what it printed so far (`output()`), and how it finished. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, checkout = REPO, entry = [path.join(checkout, 'src/cli/bin.js')]) {
  // The CLI's stdout is its answer (a token, a table): keep its own logging quiet.
  const child = spawn(process.execPath, [...entry, ...args], { cwd: checkout, env: { ...env, LOG_LEVEL: 'warn' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const finished = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { finished, output: () => ({ stdout, stderr }) };
}

/** `npm start` without npm in between, so signals reach Bosun itself. */
export class BosunProcess {
  stdout = '';
  stderr = '';
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  /**
   * `checkout`: another copy of the repository (an older version, for an upgrade), whose sources run
   * through tsx as they are (it has no dist/ of its own). This one runs what `npm start` runs: its
   * dist/, built by the global setup.
   */
  constructor(env: NodeJS.ProcessEnv, args: string[] = [], checkout = REPO, { openFiles }: { openFiles?: number } = {}) {
    const entry = checkout === REPO ? [path.join(REPO, 'src/cli/start.js')] : ['--import', 'tsx', path.join(checkout, 'src/main.ts')];
    const command = [process.execPath, ...entry, ...args];
    // With `openFiles`: started under that limit of open files, as a unit's LimitNOFILE would (prlimit execs it: the same pid).
    const [file, ...rest] = openFiles ? ['prlimit', `--nofile=${openFiles}:${openFiles}`, '--', ...command] : command;
    this.child = spawn(file!, rest, { cwd: checkout, env });
    this.child.stdout!.on('data', (c) => (this.stdout += c));
    this.child.stderr!.on('data', (c) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    // Its log lines join the test run's log file, which the teardown searches for secrets (the banner, which prints a first token on purpose, is not a log line).
    // A script outside jest (npm run fuzz) has no such file.
    this.child.once('exit', () => {
      const logLines = `${this.stdout}\n${this.stderr}`.split('\n').filter((line) => line.startsWith('{"level":'));
      if (logLines.length && process.env[TEST_ENV_VAR]) appendFileSync(sharedServices().logFile, `${logLines.join('\n')}\n`);
    });
  }

  /** Resolves once "Bosun ready" is printed, with the API base URL ('' for a worker); fails if the process exits first. */
  async ready(timeoutMs = 120_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.stdout.includes('Bosun ready')) return /API\s+(http:\/\/\S+)/.exec(this.stdout)?.[1] ?? '';
      if (this.child.exitCode !== null) throw new Error(`Bosun exited (${this.child.exitCode}):\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`Bosun not ready after ${timeoutMs} ms:\n${this.stdout}\n${this.stderr}`);
  }

  get firstToken(): string | undefined {
    return /^\s+(bsn_[A-Za-z0-9_-]+)\s*$/m.exec(this.stdout)?.[1];
  }

  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/**
 * The Bosun processes a test file starts (`--role api` / `--role worker`, each on a port of its own), and
 * the test client for any of its APIs with the file's token; stop() kills whatever is left.
 */
export class BosunProcesses {
  readonly processes: BosunProcess[] = [];
  private readonly users: User[] = [];
  token = '';

  constructor(public env: NodeJS.ProcessEnv) {}

  /** An admin token of the organization, made with the CLI as an operator would. */
  async createToken(org: string): Promise<string> {
    this.token = (await runCli(['tokens', 'create', '--org', org, '--name', 'ops', '--scopes', 'admin'], this.env)).stdout.trim();
    return this.token;
  }

  async launch(role: 'api' | 'worker', options: { openFiles?: number } = {}): Promise<BosunProcess> {
    const p = new BosunProcess({ ...this.env, PORT: String(await portForProcess()) }, ['--role', role], REPO, options);
    this.processes.push(p);
    return p;
  }

  /** A worker and an API process, both ready; the user of that API. */
  async launchApiAndWorker(): Promise<{ api: BosunProcess; worker: BosunProcess; ops: User }> {
    const worker = await this.launch('worker');
    const api = await this.launch('api');
    const ops = this.userAt(await api.ready());
    await worker.ready();
    return { api, worker, ops };
  }

  /** The test client for the API process at `base`, with the file's token; its sockets are closed by stop(). */
  userAt(base: string): User {
    const user = userAt(base, this.token);
    this.users.push(user);
    return user;
  }

  /** The processes of a role still running. */
  alive(role: 'api' | 'worker'): BosunProcess[] {
    return this.processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null && p.stdout.includes(`role: ${role}`));
  }

  async stop(): Promise<void> {
    for (const user of this.users) user.close();
    await Promise.all(this.processes.map((p) => p.stop('SIGKILL')));
  }
}
