import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from '../../src/embedded/pids';
import type { Client } from '@temporalio/client';
import supertest from 'supertest';
import type { Scope } from '../../src/domain/access/scopes';
import { eventually } from './eventually';
import { sharedServices } from './shared';
import { sharedBosunFile, type SharedBosunInfo } from './shared-bosun-info';

/*
 * The jest worker's Bosun, shared by its test files one after another (shared-bosun-process.ts): a
 * file that needs nothing of its own — no setting, no stop, no look inside — takes it instead of
 * starting one (a Bosun's start, its modules and its stop cost seconds a file). A file's
 * organizations are its own: their names carry a mark of the file (`bosun.org('acme')` says the
 * name), and `stop()` forgets them, their schedules, workflows and documents, when the file is done.
 */

const REPO = path.resolve(__dirname, '..', '..');
const START_TIMEOUT_MS = 180_000;

function published(file: string): SharedBosunInfo | null {
  if (!existsSync(file)) return null;
  const info = JSON.parse(readFileSync(file, 'utf8')) as SharedBosunInfo;
  return isAlive(info.pid) ? info : null;
}

/** The worker's Bosun, started now if it is not running yet (its errors in `shared-bosun-<worker>.log` beside the services). */
async function running(): Promise<SharedBosunInfo> {
  const { dir } = sharedServices();
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const file = sharedBosunFile(dir, worker);
  const found = published(file);
  if (found) return found;
  const errors = path.join(dir, `shared-bosun-${worker}.log`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'test/support/shared-bosun-process.ts')], {
    cwd: REPO,
    env: { ...process.env, JEST_WORKER_ID: worker },
    stdio: ['ignore', 'ignore', openSync(errors, 'a')],
  });
  // It outlives this file (the next files of the worker use it); it does not hold the worker up at its end.
  child.unref();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  const info = await eventually(async () => (code === undefined ? published(file) : ("exited" as const)), Boolean, START_TIMEOUT_MS);
  if (info === 'exited') throw new Error(`The shared Bosun exited (${code}) before it was ready: ${readFileSync(errors, 'utf8').slice(-4000)}`);
  return info as SharedBosunInfo;
}

async function control<T>(info: SharedBosunInfo, route: string, body: object): Promise<T> {
  const res = await fetch(`${info.control}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(`The shared Bosun's ${route}: ${answer.error ?? res.status}`);
  return answer;
}

/**
 * The jest worker's Bosun for this test file. Call `stop()` when the file is done (afterAll): its
 * organizations are forgotten; the Bosun goes on for the next file.
 */
export async function sharedBosun() {
  const services = sharedServices();
  const info = await running();
  const mark = randomBytes(3).toString('hex');
  const organizations = new Set<string>();
  let temporal: { client: Client; close(): Promise<void> } | undefined;
  /** This file's name for organization `org`. */
  const org = (name: string) => `${name}-${mark}`;

  return {
    api: supertest(info.url),
    /** Where the HTTP API and Socket.IO listen, for clients other than supertest. */
    url: info.url,
    /** This Bosun's Temporal task queue (shared by the worker's files). */
    taskQueue: info.taskQueue,
    sshd: services.sshd,
    services,
    mongoUri: info.mongoUri,
    /** Its master key, for a test that seals what it will open (src/domain/secrets/secret-box.ts). */
    secretKey: info.secretKey,
    org,
    /** A Temporal client of this file's own (connected on first use, closed by stop()). */
    get temporal(): Client {
      if (!temporal) {
        // Loaded only by the files that ask: the client's modules cost every file that loads them.
        const { Client: TemporalClient, Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
        const connection = Connection.lazy({ address: services.temporalAddress });
        temporal = { client: new TemporalClient({ connection }), close: () => connection.close() };
      }
      return temporal.client;
    },
    /** A fresh API token of this file's organization `name` (created on first mention). */
    async token(name: string, scopes: Scope[] = ['admin'], tokenName = `token-${randomBytes(3).toString('hex')}`) {
      organizations.add(org(name));
      return (await control<{ token: string }>(info, '/token', { org: org(name), scopes, name: tokenName })).token;
    },
    /** The routes the app serves (`METHOD /path`), as registeredRoutes(app) reads them. */
    async routes(): Promise<string[]> {
      return (await control<{ routes: string[] }>(info, '/routes', {})).routes;
    },
    async stop() {
      await temporal?.close();
      await control(info, '/forget', { orgs: [...organizations] });
    },
  };
}

export type SharedBosun = Awaited<ReturnType<typeof sharedBosun>>;
