/**
 * npm run bench:burst — trigger bursts, many of them, and what each burst cost: a CI client process
 * (ci-client.ts) sends 50 triggers at once on connections it opened beforehand, BURSTS times (20
 * unless set), each once the runs of the one before have ended. Per burst: its p50 and p99, the
 * longest the event loop of the process running the API and the worker was held, its garbage
 * collections, and the CPU each process used meanwhile (this one, mongod, the Temporal dev server).
 * Then the distribution over the bursts (median and worst of their p99s) beside the p99 of every
 * trigger: a burst's 50 triggers finish within a few ms of each other, so one slow burst sets the
 * p99 of a few — bench:deploy's figure — on its own.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { bearer, eventually, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';

const BURSTS = Number(process.env.BURSTS ?? 20);
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** CPU ms used so far by this process and by the test run's mongod and Temporal dev server. */
function cpuByProcess(): Record<string, number> {
  const used: Record<string, number> = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const key = pid === String(process.pid) ? 'bosun' : ['mongod', 'temporal'].find((n) => name.startsWith(n));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (key) used[key] = (used[key] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // Ended meanwhile.
    }
  }
  return used;
}

function burst(bosun: Bosun, token: string, deploymentId: string): Promise<Array<{ ms: number; status: number; runId: string }>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'ci-client.ts')], {
      env: { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token, DEPLOYMENT_ID: deploymentId, COUNT: '50', MODE: 'concurrent', CONNECTIONS: 'open' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the trigger client exited with ${code}`))));
  });
}

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const token = await bosun.token('bench-burst');
  const server = await userWithToken(bosun, token).addServer();
  const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'burst', server_id: server, steps: [{ name: 'only', command: 'true' }] });
  const deploymentId = created.body.data.id as string;
  const gcs: number[] = [];
  new PerformanceObserver((list) => list.getEntries().forEach((entry) => gcs.push(entry.duration))).observe({ entryTypes: ['gc'] });
  const p99s: number[] = [];
  const all: number[] = [];
  let runIds: string[] = [];
  for (let b = 1; b <= BURSTS; b += 1) {
    for (const runId of runIds) {
      await eventually(async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${runId}`).set(bearer(token))).body.data.status as string, (s) => ['success', 'failed', 'cancelled'].includes(s), 120_000);
    }
    const loop = monitorEventLoopDelay({ resolution: 1 });
    gcs.length = 0;
    const before = cpuByProcess();
    loop.enable();
    const triggers = await burst(bosun, token, deploymentId);
    loop.disable();
    const after = cpuByProcess();
    if (triggers.some((t) => t.status !== 202)) throw new Error(`a trigger answered ${triggers.find((t) => t.status !== 202)!.status}`);
    runIds = triggers.map((t) => t.runId);
    const ms = triggers.map((t) => t.ms);
    // The first burst warms the process up (JIT, connections): reported, not counted.
    if (b > 1) {
      p99s.push(percentile(ms, 99));
      all.push(...ms);
    }
    const cpu = Object.keys(after).map((k) => `${k} ${after[k]! - (before[k] ?? 0)}`).join(', ');
    console.log(`burst ${b}${b === 1 ? ' (warm-up)' : ''}: p50 ${percentile(ms, 50).toFixed(1)}  p99 ${percentile(ms, 99).toFixed(1)} ms | event loop held at most ${(loop.max / 1e6).toFixed(0)} ms | GC ${gcs.length}× ${gcs.reduce((a, x) => a + x, 0).toFixed(0)} ms | CPU ms ${cpu}`);
  }
  console.log(`bench:burst — ${BURSTS - 1} bursts of 50 triggers (open connections): bursts' p99 median ${percentile(p99s, 50).toFixed(1)} ms, worst ${Math.max(...p99s).toFixed(1)} ms; p99 of all ${all.length} triggers ${percentile(all, 99).toFixed(1)} ms`);
});
