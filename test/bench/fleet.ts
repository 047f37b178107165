/**
 * npm run bench:fleet [-- --targets 1000] [-- --record] — one deployment across a fleet, side by side in one run:
 *   Bosun: N targets (100 unless --targets or BENCH_TARGETS; loopback addresses 127.0.1.1… served by
 *          private sshds of 15 addresses each), 5 quick steps each, two batch sizes (20 and 100; with
 *          more than 100 targets 100 and 250; BENCH_BATCHES=a,b): from the trigger to the run's end as
 *          recorded (`completed_at`), the run list polled every half second meanwhile, as CI would;
 *   the physical floor (fleet-floor.ts): the same commands over connections opened beforehand, as many
 *          targets at once as the batch size;
 *   Ansible (fleet-ansible.ts): the same commands, forks and serial = the first batch size, pipelining,
 *          ControlPersist; which Ansible is named by ansible.ts (BENCH_ANSIBLE=pypi, system, or 0 to skip).
 * Each Bosun deployment runs once to warm up, then BENCH_RUNS times per batch size (3 unless set; 1
 * with more than 100 targets; the median counts). With 100 targets the first batch size's deployment
 * also runs with a health check of `true` (soak 0), interleaved, so their ratio is the check's cost
 * (BENCH_HEALTH=0 leaves it out, =1 adds it to larger fleets).
 * Reported per batch size: wall times and ratios, CPU per process (this process — API and worker —,
 * mongod, Temporal, the sshds and their shells), peak RSS of the first three, MongoDB operations per target,
 * the fleet workflow's history (events, across continue-as-new), sshd logins, failed targets, steps
 * not run exactly once; then the last recorded run's figures beside today's (history.ts: the guard).
 * BENCH_PROFILE=<file> adds one more run of the first batch size with the main thread profiled;
 * BENCH_MONGO_OPS=1 prints the measured runs' MongoDB operations per target by collection and kind (mongod's
 * profiler, whose own writes then cost mongod: not a run to compare CPU with);
 * BENCH_SPLIT=1 runs the worker as a process of its own beside this one's API (split-worker.ts): each role's
 * CPU and RSS apart, what more cores would spread (recorded as another configuration). BENCH_PROCESS=1 runs Bosun as
 * `npm start` does, both roles in one process of its own from dist/, driven over HTTP: that process's CPU and memory
 * alone, without the bench's own (tsx, the floor's client) in them (recorded as another configuration too).
 * --ansible-only runs Ansible alone on the same inventory (for a thousand hosts, where it takes many minutes).
 * Exits 1 if a target failed or a step ran other than once.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bearer, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { ansibleName, chosenAnsible } from './ansible';
import { profileMainThread } from './cpu-profile';
import { ansibleFleet } from './fleet-ansible';
import { openFloor } from './fleet-floor';
import { checkLimits } from './fleet-limits';
import { fleetHistory, opcounters, opsBetween, profileOperations, type HistorySize } from './fleet-measures';
import { fleetReport, type Side } from './fleet-report';
import { runBench } from './harness';
import { bosunProcesses, cpuBetween, cpuNow, rssPeaks, rssOf, sshdProcesses, threadCpu } from './process-stats';
import { benchMode, startSplitWorker, startWholeBosun } from './split-worker';
import { addFleetServers, fleetAddresses, startFleetSshds, targetCount } from './fleet-servers';

const TARGETS = targetCount(100);
const LARGE = TARGETS > 100;
const BATCHES = (process.env.BENCH_BATCHES ?? (LARGE ? '100,250' : '20,100')).split(',').map(Number);
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? (LARGE ? 1 : 3)));
const WITH_HEALTH = process.env.BENCH_HEALTH ? process.env.BENCH_HEALTH !== '0' : !LARGE;
const ADDRESSES = fleetAddresses(TARGETS);
const COMMANDS = ['true', 'echo step2', 'hostname', 'date', 'echo done'];
const POLL_MS = 500;
const MODE = benchMode();
const RATE_LIMIT = 1_000_000;

interface FleetResult {
  runId: string;
  ms: number;
  status: string;
  failed: number;
  /** Steps not run exactly once (attempts other than 1, or not successful), and the first few of them. */
  notOnce: number;
  notOnceExamples: string[];
}

async function fleetRun(bosun: Bosun, token: string, deploymentId: string): Promise<FleetResult> {
  const triggeredAt = Date.now();
  const trigger = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
  if (trigger.status !== 202) throw new Error(`trigger answered ${trigger.status} ${JSON.stringify(trigger.body)}`);
  // Polled as CI would: the run list's summary (the run view lists every target: read once, at the end).
  for (;;) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    const listed = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs?per_page=1`).set(bearer(token))).body.data[0];
    if (listed.id === trigger.body.run_id && ['success', 'failed', 'cancelled'].includes(listed.status)) {
      const run = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data;
      type Step = { name: string; attempts: number; status: string; server: string; serverId: string; index: number };
      const steps: Step[] = run.targets.flatMap((t: { title: string; batch: number; server_id: string; steps: Step[] }) =>
        t.steps.map((step, index) => ({ ...step, server: `${t.title} (batch ${t.batch})`, serverId: t.server_id, index })),
      );
      const notOnce = steps.filter((s) => s.attempts !== 1 || s.status !== 'success');
      // What the step's output says of its attempts (Bosun's own `---` lines: a transport retry, an interrupted attempt run again).
      const why = async (s: Step) => {
        const target = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.body.run_id}/targets/${s.serverId}`).set(bearer(token))).body.data;
        const output: string = target?.steps?.[s.index]?.output ?? '';
        return output.split('\n').filter((line) => line.startsWith('---')).join(' ');
      };
      return {
        runId: trigger.body.run_id,
        // From the trigger to the run's end as Bosun recorded it (what every client then reads), not to the next poll.
        ms: Date.parse(run.completed_at) - triggeredAt,
        status: run.status,
        failed: run.summary.total - run.summary.success,
        notOnce: notOnce.length + (TARGETS * COMMANDS.length - steps.length),
        notOnceExamples: await Promise.all(notOnce.slice(0, 5).map(async (s) => `${s.server} ${s.name}: ${s.status}, attempts ${s.attempts} ${await why(s)}`)),
      };
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

runBench({ rateLimitPerMinute: RATE_LIMIT, ...(MODE === 'in-process' ? {} : { worker: false }) }, async (benchBosun) => {
  const ansibleOnly = process.argv.includes('--ansible-only');
  const worker = MODE === 'split' && !ansibleOnly ? await startSplitWorker(benchBosun) : null;
  const whole = MODE === 'process' && !ansibleOnly ? await startWholeBosun(benchBosun, RATE_LIMIT) : null;
  const bosun = whole?.at ?? benchBosun;
  const workerPid = (worker ?? whole?.process)?.child.pid;
  const { daemons, targets } = await startFleetSshds(ADDRESSES, { logConnections: true });
  try {
    // Ansible alone on the same inventory (at 1,000 hosts it takes many minutes): its wall time, set beside a Bosun run of the same day.
    if (ansibleOnly) {
      const chosen = chosenAnsible();
      if (!chosen) throw new Error('no Ansible to run');
      const ms = ansibleFleet(chosen.playbook, targets, COMMANDS, BATCHES[0]!);
      console.log(`Ansible alone, ${TARGETS} hosts, forks ${BATCHES[0]}, serial ${BATCHES[0]}, pipelining + ControlPersist   wall ${(ms / 1000).toFixed(1)} s   ${chosen.label}`);
      return;
    }
    const limits = checkLimits(TARGETS, readFileSync(path.join(daemons[0]!.info.dir, 'sshd_config'), 'utf8'));
    const token = await bosun.token('bench-fleet');
    const user = userWithToken(bosun, token);
    // Added twenty at a time (each is verified over SSH by a workflow of its own; fifty at once outlast the verification wait on a loaded machine).
    const servers = await addFleetServers(user, targets);
    const define = async (batchSize: number, healthCheck?: object) =>
      (
        await user.define({
          targets: { server_ids: servers },
          strategy: { batch_size: batchSize, ...(healthCheck ? { health_check: healthCheck } : {}) },
          steps: COMMANDS.map((command, i) => ({ name: `step${i + 1}`, command })),
        })
      ).id as string;
    const deployments = await Promise.all(BATCHES.map((b) => define(b)));
    const checked = WITH_HEALTH ? await define(BATCHES[0]!, { command: 'true', soak_seconds: 0 }) : null;

    // The floor first, its connections closed before Bosun runs: the sshds then serve one side at a time.
    const logins = () => daemons.reduce((sum, d) => sum + d.loginsAccepted(), 0);
    const sshdSide = sshdProcesses(() => daemons.map((d) => d.pid!).filter(Boolean));
    const loginsBeforeFloor = logins();
    const floor = await openFloor(targets, COMMANDS);
    const floors: Array<{ ms: number; failed: number; sshdCpu: number }> = [];
    try {
      for (const batch of BATCHES) {
        const timed: Array<{ ms: number; failed: number }> = [];
        const sshdCpu0 = cpuNow([sshdSide]);
        for (let r = 0; r < Math.max(3, RUNS); r += 1) timed.push(await floor.time(batch));
        const sshdCpu = [...cpuBetween(sshdCpu0, cpuNow([sshdSide])).values()][0]! / timed.length;
        floors.push({ ms: median(timed.map((t) => t.ms)), failed: timed.reduce((sum, t) => sum + t.failed, 0), sshdCpu });
      }
    } finally {
      floor.close();
    }
    const floorLogins = logins() - loginsBeforeFloor;

    // RSS sampled for Bosun's processes only: walking a thousand sshd sessions every 200 ms would cost this very process CPU.
    const bosunSide = bosunProcesses(MODE, workerPid);
    const watched = [...bosunSide, sshdSide];
    await fleetRun(bosun, token, deployments[0]!); // warm: SSH pool, workflow cache
    if (checked) await fleetRun(bosun, token, checked);
    const rssAfterWarmUp = workerPid ? rssOf(workerPid) : process.memoryUsage().rss;

    const sides: Side[] = [];
    for (const [b, batch] of BATCHES.entries()) {
      const runs: FleetResult[] = [];
      const checkedRuns: FleetResult[] = [];
      const [cpu0, threads0, ops0, logins0] = [cpuNow(watched), threadCpu(workerPid), await opcounters(bosun.mongoUri), logins()];
      const rss = rssPeaks(bosunSide);
      const profiled = process.env.BENCH_MONGO_OPS === '1' ? await profileOperations(bosun.mongoUri) : null;
      for (let r = 0; r < RUNS; r += 1) {
        runs.push(await fleetRun(bosun, token, deployments[b]!));
        // Interleaved: the same deployment with a health check, run by run (its CPU counts in this batch size's).
        if (b === 0 && checked) checkedRuns.push(await fleetRun(bosun, token, checked));
      }
      const peaks = rss.stop();
      const [cpu, threads, ops] = [cpuBetween(cpu0, cpuNow(watched)), cpuBetween(threads0, threadCpu(workerPid)), opsBetween(ops0, await opcounters(bosun.mongoUri))];
      const history: HistorySize | null = await fleetHistory(bosun.temporal, runs.at(-1)!.runId).catch((error) => {
        console.error(`the fleet workflow's history could not be read: ${error}`);
        return null;
      });
      const count = runs.length + checkedRuns.length;
      if (profiled) {
        const perTarget = (await profiled.stop()).map(([what, n]) => `${what} ${(n / (count * TARGETS)).toFixed(2)}`);
        console.log(`batch ${batch}: MongoDB operations per target by collection and kind (the profiler's): ${perTarget.join('; ')}`);
      }
      sides.push({
        batch,
        runs: runs.map((r) => r.ms),
        checkedRuns: checkedRuns.map((r) => r.ms),
        statuses: [...new Set([...runs, ...checkedRuns].map((r) => r.status))],
        failed: [...runs, ...checkedRuns].reduce((sum, r) => sum + r.failed, 0),
        notOnce: [...runs, ...checkedRuns].reduce((sum, r) => sum + r.notOnce, 0),
        notOnceExamples: [...runs, ...checkedRuns].flatMap((r) => r.notOnceExamples).slice(0, 5),
        floorMs: floors[b]!.ms,
        floorSshdCpu: floors[b]!.sshdCpu,
        cpuPerRun: new Map([...cpu].map(([name, s]) => [name, s / count])),
        threadsPerRun: new Map([...threads].map(([name, s]) => [name, s / count])),
        peakRss: peaks,
        opsPerTarget: ops.total / (count * TARGETS),
        opsByKindPerTarget: Object.fromEntries(Object.entries(ops.byKind).map(([k, v]) => [k, v / (count * TARGETS)])),
        loginsPerRun: (logins() - logins0) / count,
        history,
      });
    }

    let profile = null;
    if (process.env.BENCH_PROFILE) {
      const profiler = await profileMainThread(process.env.BENCH_PROFILE);
      const profiled = await fleetRun(bosun, token, deployments[0]!);
      profile = { ms: profiled.ms, summary: await profiler.stop(), file: process.env.BENCH_PROFILE };
    }
    const chosen = chosenAnsible();
    const ansible = chosen && { label: chosen.label, name: ansibleName(chosen), forks: BATCHES[0]!, ms: ansibleFleet(chosen.playbook, targets, COMMANDS, BATCHES[0]!) };

    const report = fleetReport({
      targets: TARGETS,
      mode: MODE,
      daemons: daemons.length,
      steps: COMMANDS.length,
      cores: os.cpus().length,
      limits,
      floorLogins,
      floorFailed: floors.reduce((sum, f) => sum + f.failed, 0),
      rssAfterWarmUp,
      sides,
      ansible,
      profile,
    });
    if (report.failed) throw new Error('a target failed or a step did not run exactly once');
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    await worker?.stop();
    await whole?.process.stop();
  }
});
