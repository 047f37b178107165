import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import type { Bosun } from '../support/bosun';
import { portForProcess } from '../support/ports';
import { BosunProcess } from '../support/processes';

/**
 * Where a fleet bench's Bosun runs:
 * - `in-process` (the default): the API and the worker inside the bench's own process (tsx, the harness, the floor's client);
 * - `split` (BENCH_SPLIT=1): the worker as a process of its own beside the bench's API — each role's CPU its own process's,
 *   what a run on more cores would spread across them;
 * - `process` (BENCH_PROCESS=1): Bosun as `npm start` runs it, the API and the worker in one process of its own from dist/,
 *   driven over HTTP as CI drives it: that process's CPU and memory alone, nothing of the bench's in them.
 */
export type BenchMode = 'in-process' | 'split' | 'process';

export function benchMode(): BenchMode {
  if (process.env.BENCH_SPLIT === '1') return 'split';
  if (process.env.BENCH_PROCESS === '1') return 'process';
  return 'in-process';
}

/** Production's settings (the bench's in-process API keeps the tests' few), on the in-process Bosun's database and task queue. */
function processEnv(bosun: Bosun, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, ...bosun.env, BOSUN_HOME: mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-')), LOG_LEVEL: 'warn', WORKER_METRICS_PORT: '0', ...extra };
}

/** BENCH_SPLIT=1: the worker as a process of its own (`--role worker`, what `npm run worker` runs). */
export async function startSplitWorker(bosun: Bosun): Promise<BosunProcess> {
  const worker = new BosunProcess(processEnv(bosun, {}), ['--role', 'worker']);
  await worker.ready();
  return worker;
}

/**
 * BENCH_PROCESS=1: the API and the worker in one process from dist/ (what `npm start` runs); the bench's in-process Bosun is
 * then the API alone, kept for its tokens. `at`: the same Bosun as the bench knows it, its requests going to that process.
 */
export async function startWholeBosun(bosun: Bosun, rateLimitPerMinute: number): Promise<{ process: BosunProcess; at: Bosun }> {
  const child = new BosunProcess(processEnv(bosun, { HOST: '127.0.0.1', PORT: String(await portForProcess()), RATE_LIMIT_PER_MINUTE: String(rateLimitPerMinute) }));
  const url = (await child.ready()).replace(/\/api\/v1\/?$/, '');
  return { process: child, at: { ...bosun, api: supertest(url), url } };
}
