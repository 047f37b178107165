import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Bosun } from '../support/bosun';
import { BosunProcess } from '../support/processes';

/**
 * BENCH_SPLIT=1: the worker as a process of its own (`--role worker`, what `npm run worker` runs) on the
 * in-process API's database and task queue, so each role's CPU is its own process's — what a run on more
 * cores would spread across them. Its settings are production's (the bench's API keeps the tests' few).
 */
export async function startSplitWorker(bosun: Bosun): Promise<BosunProcess> {
  const worker = new BosunProcess(
    { ...process.env, ...bosun.env, BOSUN_HOME: mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-worker-')), LOG_LEVEL: 'warn', WORKER_METRICS_PORT: '0' },
    ['--role', 'worker'],
  );
  await worker.ready();
  return worker;
}
