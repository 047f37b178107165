import type { ProfileSummary } from './cpu-profile';
import type { HistorySize } from './fleet-measures';
import { compareWithRecorded, type Figure } from './history';
import { NODE_API, NODE_BOTH, NODE_WORKER } from './process-stats';
import type { BenchMode } from './split-worker';

/** One batch size's measured runs, Bosun's and the floor's. */
export interface Side {
  batch: number;
  /** Wall times (ms) of the measured runs; checkedRuns: those with a health check, interleaved. */
  runs: number[];
  checkedRuns: number[];
  statuses: string[];
  failed: number;
  notOnce: number;
  notOnceExamples: string[];
  floorMs: number;
  /** CPU seconds of the sshds and their shells per floor round: what the commands themselves cost the servers. */
  floorSshdCpu: number;
  /** CPU seconds per run by process, and by thread of the process running the worker. */
  cpuPerRun: Map<string, number>;
  threadsPerRun: Map<string, number>;
  peakRss: Map<string, number>;
  opsPerTarget: number;
  opsByKindPerTarget: Record<string, number>;
  loginsPerRun: number;
  history: HistorySize | null;
}

export interface FleetReport {
  targets: number;
  /** Where Bosun ran (split-worker.ts): in the bench's process, its worker apart (BENCH_SPLIT=1), or as `npm start` runs it (BENCH_PROCESS=1). */
  mode: BenchMode;
  daemons: number;
  steps: number;
  cores: number;
  limits: string[];
  floorLogins: number;
  floorFailed: number;
  rssAfterWarmUp: number;
  sides: Side[];
  /** name: what its recorded figures are keyed by (ansible.ts ansibleName). */
  ansible: { label: string; name: string; forks: number; ms: number } | null;
  profile: { ms: number; summary: ProfileSummary; file: string } | null;
}

/**
 * The same code moves by up to about 20% between runs on this shared 2-core machine (bench:fleet's
 * batch-20 medians 4.7–5.6 s on one commit, docs/performance.md): a smaller change is not flagged.
 */
const NOISE_BAND = 0.2;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => bytes / 1024 / 1024;
const join = (m: Map<string, number>, f: (x: number) => string) =>
  [...m]
    .filter(([, x]) => x > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, x]) => `${k} ${f(x)}`)
    .join(', ');

/** The process that used the most CPU, and its seconds. */
const busiest = (cpu: Map<string, number>): [string, number] => [...cpu].sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];

/** Prints the report and the recorded run's figures beside it; whether a target failed or a step ran other than once. */
export function fleetReport(r: FleetReport): { failed: boolean } {
  const wall = (xs: number[]) => (xs.length > 1 ? `${s(median(xs))} (median of ${xs.map(s).join(', ')})` : s(median(xs)));
  console.log(`bench:fleet — ${r.targets} targets (loopback addresses on ${r.daemons} sshd), ${r.steps} steps each, ${r.cores} cores`);
  r.limits.forEach((line) => console.log(`   ${line}`));
  console.log(`physical floor: ${r.targets * r.steps} commands over ${r.targets} connections opened beforehand (sshd logins during the floor phase, its own and Bosun's health checks': ${r.floorLogins}); failed commands ${r.floorFailed}`);
  const figures: Figure[] = [];
  for (const side of r.sides) {
    const bosun = median(side.runs);
    const tag = `batch${side.batch}`;
    console.log('');
    console.log(`Bosun, batch_size ${side.batch}   wall ${wall(side.runs)}   ${side.statuses.join('/')}   failed targets ${side.failed}   steps not run exactly once ${side.notOnce}`);
    side.notOnceExamples.forEach((line) => console.log(`   not run exactly once: ${line}`));
    console.log(`   floor, ${side.batch} targets at once   wall ${s(side.floorMs)} (sshd + shells CPU ${side.floorSshdCpu.toFixed(1)} s)   Bosun / floor = ${(bosun / side.floorMs).toFixed(2)}×`);
    if (side.checkedRuns.length) console.log(`   + health check \`true\` (soak 0), interleaved   wall ${wall(side.checkedRuns)}   with / without = ${(median(side.checkedRuns) / bosun).toFixed(2)}× (goal ≤ 1.15×)`);
    console.log(`   CPU per run: ${join(side.cpuPerRun, (x) => `${x.toFixed(1)} s`)}`);
    if (r.mode === 'split') {
      const [name, seconds] = busiest(side.cpuPerRun);
      const main = side.threadsPerRun.get('main (JS)') ?? 0;
      // One thread runs the worker's JS: however many cores, a run cannot take less than that thread's CPU.
      console.log(`   busiest process ${name} ${seconds.toFixed(1)} s per run; the worker's main JS thread ${main.toFixed(1)} s = ${((main * 1000) / side.floorMs).toFixed(2)}× the floor (no number of cores brings a run below it)`);
    }
    console.log(`   the worker's threads, CPU per run: ${join(side.threadsPerRun, (x) => `${x.toFixed(2)} s`)}`);
    console.log(`   peak RSS: ${join(side.peakRss, (x) => `${mib(x).toFixed(0)} MiB`)}`);
    const kinds = Object.entries(side.opsByKindPerTarget).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
    console.log(`   MongoDB operations per target ${side.opsPerTarget.toFixed(1)} (${kinds})   sshd logins per run ${side.loginsPerRun.toFixed(0)}`);
    if (side.history) console.log(`   fleet workflow history: ${side.history.events} events in ${side.history.executions} execution(s); a target group's workflow ${side.history.groupEvents} events`);
    const node = [NODE_BOTH, NODE_API, NODE_WORKER].reduce((sum, name) => sum + (side.cpuPerRun.get(name) ?? 0), 0);
    const nodeRss = [NODE_BOTH, NODE_API, NODE_WORKER].reduce((sum, name) => sum + (side.peakRss.get(name) ?? 0), 0);
    figures.push(
      { key: `bosun_${tag}_s`, label: `Bosun, batch ${side.batch}`, value: bosun / 1000, unit: 's' },
      { key: `floor_${tag}_s`, label: `floor, ${side.batch} at once`, value: side.floorMs / 1000, unit: 's' },
      { key: `bosun_over_floor_${tag}`, label: `Bosun / floor, batch ${side.batch}`, value: bosun / side.floorMs, unit: '×', better: 'lower' },
      { key: `node_cpu_per_target_ms_${tag}`, label: `node CPU per target, batch ${side.batch}`, value: (node * 1000) / r.targets, unit: 'ms' },
      { key: `mongo_ops_per_target_${tag}`, label: `MongoDB ops per target, batch ${side.batch}`, value: side.opsPerTarget, unit: 'ops', better: 'lower' },
      { key: `peak_rss_node_${tag}_mib`, label: `peak RSS node, batch ${side.batch}`, value: mib(nodeRss), unit: 'MiB', better: 'lower' },
    );
    if (side.history) figures.push({ key: `history_events_${tag}`, label: `fleet history events, batch ${side.batch}`, value: side.history.events, unit: 'events', better: 'lower' });
    if (side.checkedRuns.length) figures.push({ key: 'health_check_ratio', label: 'health check / none', value: median(side.checkedRuns) / bosun, unit: '×', better: 'lower' });
  }
  console.log('');
  console.log(`RSS of the process running the ${r.mode === 'split' ? 'worker' : 'API and the worker'}${r.mode === 'process' ? ' (as `npm start` runs it)' : ''} after the warm-up: ${mib(r.rssAfterWarmUp).toFixed(0)} MiB`);
  const first = r.sides[0]!;
  if (r.ansible) {
    const ratio = r.ansible.ms / median(first.runs);
    console.log(`Ansible, forks ${r.ansible.forks}, serial ${r.ansible.forks}, pipelining + ControlPersist   wall ${s(r.ansible.ms)}   Ansible / Bosun (batch ${first.batch}) = ${ratio.toFixed(1)}×`);
    console.log(`   Ansible: ${r.ansible.label}`);
    // Keyed by the Ansible's version: another Ansible is another baseline.
    figures.push(
      { key: `ansible_s ${r.ansible.name}`, label: `Ansible, forks ${r.ansible.forks}`, value: r.ansible.ms / 1000, unit: 's' },
      { key: `ansible_over_bosun ${r.ansible.name}`, label: `Ansible / Bosun, batch ${first.batch}`, value: ratio, unit: '×', better: 'higher' },
    );
  } else console.log('Ansible: skipped (BENCH_ANSIBLE=0, or it could not be had)');
  if (r.profile) {
    const { summary } = r.profile;
    console.log('');
    console.log(`profiled run (batch ${first.batch}, not counted above): ${s(r.profile.ms)}; main thread busy ${(summary.busyMs / 1000).toFixed(1)} s, ${(summary.busyMs / r.targets).toFixed(2)} ms per target; profile in ${r.profile.file}`);
    summary.areas.slice(0, 12).forEach(([area, ms]) => console.log(`   ${area.padEnd(48)} ${(ms / r.targets).toFixed(2)} ms per target (${((100 * ms) / summary.busyMs).toFixed(0)}%)`));
    console.log('   busiest functions (self time):');
    summary.functions.slice(0, 10).forEach(([fn, ms]) => console.log(`     ${(ms / r.targets).toFixed(3)} ms/target  ${fn}`));
  }
  const batches = r.sides.map((side) => side.batch).join(' and ');
  const failed = r.sides.some((side) => side.failed > 0 || side.notOnce > 0) || r.floorFailed > 0;
  const outcome = failed ? 'FAILED: a target failed or a step ran other than once' : undefined;
  compareWithRecorded('fleet', `${r.targets} targets, batch ${batches}${r.sides[0]!.checkedRuns.length ? ', health-checked' : ''}${r.mode === 'split' ? ', API and worker apart' : r.mode === 'process' ? ', as npm start runs it' : ''}${process.env.SSH_POOL_MAX ? `, SSH_POOL_MAX ${process.env.SSH_POOL_MAX}` : ''}`, figures, NOISE_BAND, outcome);
  return { failed };
}
