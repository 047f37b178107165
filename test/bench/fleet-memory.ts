/**
 * npm run bench:fleet-memory [-- --targets 1000] — the API+worker process's memory around one large
 * fleet run: N servers (300 unless --targets or BENCH_TARGETS; loopback addresses 127.0.1.1… on
 * private sshds, as bench:fleet), one deployment of 5 quick steps over all of them in batches of
 * BENCH_BATCH (100). Reported, from /proc (VmRSS), for this process (Bosun's API and worker): idle
 * (the servers added, their health checks running), a warm-up run, then the measured run's peak and
 * its growth over idle, RSS at its end and 60 s after it (BENCH_SETTLE_SECONDS), and how long RSS took
 * to come back within 50 MiB of idle; beside each, the workflows the Temporal worker holds in its cache
 * (the SDK's temporal_sticky_cache_size) and the main thread's V8 heap (used, and grown to), at the end once collected too
 * (what the run left behind on the main thread, its garbage aside). BENCH_HEAP_PROFILE=1 adds where the
 * main thread's live heap was allocated during the measured run (heap-profile.ts). BENCH_PROCESS=1 measures Bosun as
 * `npm start` runs it instead, a process of its own from dist/ driven over HTTP (split-worker.ts): its RSS alone, nothing of
 * the bench's (tsx, this script) in it; its heap read from its /metrics, not collected at the end. Paired runs against another checkout: run it in both,
 * taking turns.
 */
import { Session } from 'node:inspector/promises';
import { bearer, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { parseMetrics, valueOf } from '../support/metrics';
import { runBench } from './harness';
import { sampleHeap } from './heap-profile';
import { rssOf } from './process-stats';
import { benchMode, startWholeBosun } from './split-worker';
import { addFleetServers, fleetAddresses, startFleetSshds, targetCount } from './fleet-servers';

const TARGETS = targetCount(300);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 60);
const COMMANDS = ['true', 'echo step2', 'hostname', 'date', 'echo done'];
const MiB = 2 ** 20;
/** "Back to idle": within this much of the idle figure. */
const RETURNED_WITHIN = 50 * MiB;

const WHOLE = benchMode() === 'process';
/** The process measured: this one, or (BENCH_PROCESS=1) Bosun's own. */
let measuredPid = process.pid;
const mib = (bytes: number) => `${Math.round(bytes / MiB)} MiB`;

interface Reading {
  rss: number;
  /** The main thread's V8 heap, used and as large as it has grown (the process's own /metrics: prom-client's). */
  heapUsed: number;
  heapTotal: number;
  cachedWorkflows: number;
}

async function reading(bosun: Bosun): Promise<Reading> {
  const metrics = parseMetrics((await bosun.api.get('/metrics')).text);
  return {
    rss: rssOf(measuredPid),
    heapUsed: valueOf(metrics, 'nodejs_heap_size_used_bytes'),
    heapTotal: valueOf(metrics, 'nodejs_heap_size_total_bytes'),
    cachedWorkflows: valueOf(metrics, 'temporal_sticky_cache_size'),
  };
}

const shown = (r: Reading) => `RSS ${mib(r.rss)}, main heap ${mib(r.heapUsed)} used of ${mib(r.heapTotal)}, cached workflows ${r.cachedWorkflows}`;

/** The most any reading reached while `body` ran (sampled every 200 ms), and body's result. */
async function peakDuring<T>(bosun: Bosun, body: () => Promise<T>): Promise<{ peak: Reading; result: T }> {
  const peak: Reading = { rss: 0, heapUsed: 0, heapTotal: 0, cachedWorkflows: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const r = await reading(bosun);
      peak.rss = Math.max(peak.rss, r.rss);
      peak.heapUsed = Math.max(peak.heapUsed, r.heapUsed);
      peak.heapTotal = Math.max(peak.heapTotal, r.heapTotal);
      peak.cachedWorkflows = Math.max(peak.cachedWorkflows, r.cachedWorkflows);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  try {
    return { peak, result: await body() };
  } finally {
    sampling = false;
    await sampler;
  }
}

// WORKER_WORKFLOW_CACHE passed on to the Bosun measured (the worker's default unless set).
const cache = process.env.WORKER_WORKFLOW_CACHE;

runBench({ rateLimitPerMinute: 1_000_000, env: cache ? { WORKER_WORKFLOW_CACHE: cache } : {}, ...(WHOLE ? { worker: false } : {}) }, async (benchBosun) => {
  const whole = WHOLE ? await startWholeBosun(benchBosun, 1_000_000) : null;
  const bosun = whole?.at ?? benchBosun;
  measuredPid = whole?.process.child.pid ?? process.pid;
  const { daemons, targets } = await startFleetSshds(fleetAddresses(TARGETS));
  try {
    const token = await bosun.token('bench-fleet-memory');
    const user = userWithToken(bosun, token);
    const servers = await addFleetServers(user, targets);
    const deployment = (await user.define({
      targets: { server_ids: servers },
      strategy: { batch_size: BATCH },
      steps: COMMANDS.map((command, i) => ({ name: `step${i + 1}`, command })),
    })).id as string;
    // Polled as CI would, the run list's summary every half second (as bench:fleet); the whole run view read once, at the end.
    const run = async () => {
      const { run_id: runId } = await user.trigger(deployment);
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const listed = (await bosun.api.get(`/api/v1/deployments/${deployment}/runs?per_page=1`).set(bearer(token))).body.data[0];
        if (listed.id !== runId || !['success', 'failed', 'cancelled'].includes(listed.status)) continue;
        const done = await user.getRun(deployment, runId);
        if (done.status !== 'success') throw new Error(`the run ended ${done.status}: ${JSON.stringify(done.summary)}`);
        return Date.parse(done.completed_at) - Date.parse(done.created_at);
      }
    };

    // Idle: the median of ten readings a second apart, the servers' verifications over.
    const idleReadings: Reading[] = [];
    for (let i = 0; i < 10; i += 1) {
      idleReadings.push(await reading(bosun));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const idle = idleReadings.sort((a, b) => a.rss - b.rss)[5]!;
    const warm = await peakDuring(bosun, run);
    const afterWarm = await reading(bosun);
    const heap = process.env.BENCH_HEAP_PROFILE && !whole ? await sampleHeap() : null;
    const measured = await peakDuring(bosun, run);
    if (heap) console.log(await heap.stop());
    const atEnd = await reading(bosun);
    let returnedAfter: number | null = null;
    const settleStart = Date.now();
    let settled = atEnd;
    while (Date.now() - settleStart < SETTLE_SECONDS * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      settled = await reading(bosun);
      if (returnedAfter === null && settled.rss <= idle.rss + RETURNED_WITHIN) returnedAfter = (Date.now() - settleStart) / 1000;
    }

    // What the main thread's heap still holds once collected: what the run left behind (its garbage aside). Not for a process of its own.
    let collected: Reading | null = null;
    if (!whole) {
      const inspector = new Session();
      inspector.connect();
      await inspector.post('HeapProfiler.collectGarbage');
      inspector.disconnect();
      collected = await reading(bosun);
    }

    console.log(`bench:fleet-memory — ${TARGETS} targets × ${COMMANDS.length} steps, batch ${BATCH}, on ${daemons.length} sshds; ${whole ? 'Bosun as `npm start` runs it (API + worker, a process of its own)' : 'this process (API + worker)'} by /proc/<pid>/status`);
    console.log(`  idle (servers added)          ${shown(idle)}`);
    console.log(`  warm-up run (${(warm.result / 1000).toFixed(1)} s) peak     ${shown(warm.peak)}; after it ${shown(afterWarm)}`);
    console.log(`  measured run (${(measured.result / 1000).toFixed(1)} s) peak   ${shown(measured.peak)}`);
    console.log(`  peak growth over idle         ${mib(measured.peak.rss - idle.rss)}`);
    console.log(`  at the run's end              ${shown(atEnd)}`);
    console.log(`  ${SETTLE_SECONDS} s after its end          ${shown(settled)}`);
    if (collected) console.log(`  then after a full collection  ${shown(collected)}`);
    console.log(`  back within ${mib(RETURNED_WITHIN)} of idle     ${returnedAfter === null ? `not within ${SETTLE_SECONDS} s` : `after ${returnedAfter.toFixed(0)} s`}`);
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    await whole?.process.stop();
  }
});
