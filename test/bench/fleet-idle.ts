/**
 * npm run bench:fleet-idle [-- --targets 1000] — what Bosun spends on N servers while nothing runs:
 * their health checks (each verified server checked every SERVER_HEALTH_INTERVAL_SECONDS, 60). N servers
 * (1,000 unless --targets or BENCH_TARGETS) on private sshds, as bench:fleet; once added and verified,
 * BENCH_SETTLE_SECONDS (90) for the checks to reach their pace, then the CPU of Bosun's process (as
 * `npm start` runs it: API and worker, from dist/), mongod, the Temporal dev server and the sshds over
 * BENCH_WINDOW_SECONDS (120): in cores, and per server per minute. Beside a run, this is what a large
 * fleet's run shares the machine with.
 */
import { userWithToken } from '../support/client';
import { addFleetServers, fleetAddresses, startFleetSshds, targetCount } from './fleet-servers';
import { runBench } from './harness';
import { bosunProcesses, cpuBetween, cpuNow, sshdProcesses } from './process-stats';
import { startWholeBosun } from './split-worker';

const TARGETS = targetCount(1000);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 90);
const WINDOW_SECONDS = Number(process.env.BENCH_WINDOW_SECONDS ?? 120);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

runBench({ rateLimitPerMinute: 1_000_000, worker: false }, async (benchBosun) => {
  const whole = await startWholeBosun(benchBosun, 1_000_000);
  const { daemons, targets } = await startFleetSshds(fleetAddresses(TARGETS));
  try {
    await addFleetServers(userWithToken(whole.at, await whole.at.token('bench-fleet-idle')), targets);
    await sleep(SETTLE_SECONDS * 1000);
    const watched = [...bosunProcesses('process', whole.process.child.pid!), sshdProcesses(() => daemons.map((d) => d.pid!).filter(Boolean))];
    const before = cpuNow(watched);
    const startedAt = Date.now();
    await sleep(WINDOW_SECONDS * 1000);
    const used = cpuBetween(before, cpuNow(watched));
    const seconds = (Date.now() - startedAt) / 1000;
    const perServerMinute = (cpu: number) => `${((cpu * 1000) / ((TARGETS * seconds) / 60)).toFixed(1)} ms per server per minute`;
    console.log(`bench:fleet-idle — ${TARGETS} servers on ${daemons.length} sshds, nothing running, over ${seconds.toFixed(0)} s (Bosun as \`npm start\` runs it)`);
    let all = 0;
    for (const [name, cpu] of used) {
      all += cpu;
      console.log(`  ${name.padEnd(22)} ${cpu.toFixed(1).padStart(6)} s CPU   ${(cpu / seconds).toFixed(3)} cores   ${perServerMinute(cpu)}`);
    }
    console.log(`  ${'all'.padEnd(22)} ${all.toFixed(1).padStart(6)} s CPU   ${(all / seconds).toFixed(3)} cores   ${perServerMinute(all)}`);
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    await whole.process.stop();
  }
});
