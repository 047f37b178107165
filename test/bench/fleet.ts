/**
 * npm run bench:fleet — one deployment across a fleet, side by side in one run:
 *   Bosun: 100 targets (100 loopback addresses, 127.0.1.1–127.0.1.100, served by private sshds),
 *          5 quick steps each, batch_size 20 (then 100): from the trigger to the run's end as
 *          recorded (`completed_at`), the run list polled every half second meanwhile, as CI would;
 *   Ansible: the same 5 `command` tasks on the same hosts, forks 20, serial 20, pipelining and
 *          ControlPersist; which Ansible (its version and origin) is chosen and named by ansible.ts
 *          (BENCH_ANSIBLE=pypi, the default, or system).
 * Each side runs once to warm up (SSH connections, control sockets), then is measured: Bosun
 * BENCH_RUNS times per batch size (3 unless set; the median counts), Ansible once (it takes ~50 s).
 * With batch_size 20, the same deployment with a health check of `true` (soak 0) runs interleaved
 * with the one without, so their ratio is the check's cost on the same machine at the same moment
 * (BENCH_HEALTH=0 leaves it out: the runs then are what older versions of this bench measured).
 * It reports the wall times and their ratio, failures, steps run more than once, and this process's
 * peak RSS (the worker runs in it) over its RSS before the runs. Exits 1 if a target failed or a
 * step ran twice. BENCH_ANSIBLE=0 skips Ansible.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bearer, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { Sshd } from '../support/sshd';
import { chosenAnsible } from './ansible';
import { runBench } from './harness';

const TARGETS = Number(process.env.BENCH_TARGETS ?? 100);
const ADDRESSES = Array.from({ length: TARGETS }, (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`);
const COMMANDS = ['true', 'echo step2', 'hostname', 'date', 'echo done'];
const POLL_MS = 500;
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));

/** sshd listens on at most 16 addresses: one daemon per 15 of them. */
const PER_SSHD = 15;
const sshdOf = (daemons: Sshd[], index: number) => daemons[Math.floor(index / PER_SSHD)]!;

/** The same five commands on the same hosts with Ansible: a warm-up run, then the measured one (ms). */
function ansible(daemons: Sshd[], playbook: string): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-bench-fleet-ansible-'));
  const hosts = ADDRESSES.map((address, i) => {
    const { port, username, privateKey } = sshdOf(daemons, i).info;
    const key = path.join(dir, `key-${port}`);
    writeFileSync(key, privateKey, { mode: 0o600 });
    return `${address} ansible_port=${port} ansible_user=${username} ansible_ssh_private_key_file=${key}`;
  });
  writeFileSync(path.join(dir, 'inventory'), `[fleet]\n${hosts.join('\n')}\n`);
  writeFileSync(
    path.join(dir, 'ansible.cfg'),
    `[defaults]\nforks = 20\nhost_key_checking = False\ngathering = explicit\ninterpreter_python = /usr/bin/python3\n` +
      `[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=auto -o ControlPersist=120s -o ControlPath=${dir}/cp-%%h-%%p-%%r -o UserKnownHostsFile=/dev/null\n`,
  );
  const tasks = COMMANDS.map((command, i) => `    - name: step ${i + 1}\n      command: "${command}"\n`).join('');
  writeFileSync(path.join(dir, 'play.yml'), `- hosts: fleet\n  serial: 20\n  gather_facts: false\n  tasks:\n${tasks}`);
  const run = () =>
    execFileSync(playbook, ['-i', 'inventory', 'play.yml'], { cwd: dir, env: { ...process.env, ANSIBLE_CONFIG: path.join(dir, 'ansible.cfg') }, stdio: 'pipe', maxBuffer: 64 * 1024 * 1024 });
  try {
    run();
    const t0 = performance.now();
    run();
    return performance.now() - t0;
  } finally {
    ADDRESSES.forEach((a, i) => {
      const { port, username } = sshdOf(daemons, i).info;
      spawnSync('ssh', ['-O', 'exit', '-o', `ControlPath=${dir}/cp-${a}-${port}-${username}`, a], { stdio: 'ignore' });
    });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds used so far by each kind of process on the machine (this process, temporal, mongod, sshd and its sessions, the rest). */
function cpuByProcess(): Record<string, number> {
  const tick = 100; // USER_HZ
  const totals: Record<string, number> = {};
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / tick;
      const kind = Number(pid) === process.pid ? 'bosun (this process)' : ['temporal', 'mongod'].includes(name) ? name : name === 'sshd' || name === 'sh' || name === 'bash' ? 'sshd + step shells' : 'other';
      totals[kind] = (totals[kind] ?? 0) + seconds;
    } catch {
      // gone meanwhile
    }
  }
  return totals;
}

/** CPU seconds used since `before`, per run of `runs`. */
const cpuSince = (before: Record<string, number>, runs: number) => {
  const after = cpuByProcess();
  // Processes that ended meanwhile (step shells) are not counted: a lower bound for them.
  return Object.entries(after)
    .map(([kind, s]) => [kind, (s - (before[kind] ?? 0)) / runs] as const)
    .filter(([, s]) => s > 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, s]) => `${kind} ${s.toFixed(1)} s`)
    .join(', ');
};

interface FleetResult {
  ms: number;
  status: string;
  failed: number;
  /** Steps that ran more than once (attempts > 1), or not exactly once. */
  twice: number;
  peakRss: number;
}

/** The measured runs of one deployment (BENCH_RUNS of them, 3 unless set: the machine is noisy): their median wall time, failures summed. */
interface Measured {
  runs: FleetResult[];
  ms: number;
  failed: number;
  twice: number;
  peakRss: number;
}

async function measured(run: () => Promise<FleetResult>): Promise<Measured> {
  const runs: FleetResult[] = [];
  for (let i = 0; i < RUNS; i += 1) runs.push(await run());
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
  const sum = (f: (r: FleetResult) => number) => runs.reduce((total, r) => total + f(r), 0);
  return { runs, ms: sorted[Math.floor(sorted.length / 2)]!, failed: sum((r) => r.failed), twice: sum((r) => r.twice), peakRss: Math.max(...runs.map((r) => r.peakRss)) };
}

async function fleetRun(bosun: Bosun, token: string, deploymentId: string): Promise<FleetResult> {
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  try {
    const triggeredAt = Date.now();
    const trigger = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
    if (trigger.status !== 202) throw new Error(`trigger answered ${trigger.status} ${JSON.stringify(trigger.body)}`);
    // Polled as CI would: the run list's summary (the run view lists every target: read once, at the end).
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const listed = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs?per_page=1`).set(bearer(token))).body.data[0];
      if (listed.id === trigger.body.run_id && ['success', 'failed', 'cancelled'].includes(listed.status)) {
        const run = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data;
        // From the trigger to the run's end as Bosun recorded it (what every client then reads), not to the next poll.
        const ms = Date.parse(run.completed_at) - triggeredAt;
        const steps = run.targets.flatMap((t: { steps: Array<{ attempts: number; status: string }> }) => t.steps);
        return {
          ms,
          status: run.status,
          failed: run.summary.total - run.summary.success,
          twice: steps.filter((s: { attempts: number; status: string }) => s.attempts !== 1 || s.status !== 'success').length,
          peakRss,
        };
      }
    }
  } finally {
    clearInterval(sampler);
  }
}

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const daemons: Sshd[] = [];
  for (let i = 0; i < ADDRESSES.length; i += PER_SSHD) daemons.push(await Sshd.startPrivate(ADDRESSES.slice(i, i + PER_SSHD)));
  try {
    const token = await bosun.token('bench-fleet');
    const user = userWithToken(bosun, token);
    const servers: string[] = [];
    // Added ten at a time (each is verified over SSH by a workflow of its own).
    for (let i = 0; i < ADDRESSES.length; i += 10) {
      servers.push(...(await Promise.all(ADDRESSES.slice(i, i + 10).map((host, k) => user.addServer({ host, title: `fleet-${i + k + 1}`, sshd: sshdOf(daemons, i + k).info })))));
    }
    const define = async (batchSize: number, healthCheck?: object) =>
      (
        await user.define({
          targets: { server_ids: servers },
          strategy: { batch_size: batchSize, ...(healthCheck ? { health_check: healthCheck } : {}) },
          steps: COMMANDS.map((command, i) => ({ name: `step${i + 1}`, command })),
        })
      ).id as string;
    const batch20 = await define(20);
    const batch100 = await define(100);
    const checked20 = await define(20, { command: 'true', soak_seconds: 0 });

    const rssBefore = process.memoryUsage().rss;
    await fleetRun(bosun, token, batch20); // warm: SSH pool, workflow cache
    if (process.env.BENCH_HEALTH !== '0') await fleetRun(bosun, token, checked20);
    const cpu20 = cpuByProcess();
    // Interleaved: one without the check, one with it, RUNS times.
    const checkedRuns: FleetResult[] = [];
    const withHealth = process.env.BENCH_HEALTH !== '0';
    const b20 = await measured(async () => {
      const plain = await fleetRun(bosun, token, batch20);
      if (withHealth) checkedRuns.push(await fleetRun(bosun, token, checked20));
      return plain;
    });
    const cpuOf20 = cpuSince(cpu20, b20.runs.length * (withHealth ? 2 : 1));
    const h20 = withHealth ? await measured(async () => checkedRuns.shift()!) : null;
    const b100 = await measured(() => fleetRun(bosun, token, batch100));
    const chosen = chosenAnsible();
    const c = chosen && ansible(daemons, chosen.playbook);

    const s = (x: number) => `${(x / 1000).toFixed(1)} s`;
    const mib = (x: number) => `${(x / 1024 / 1024).toFixed(0)} MiB`;
    const wall = (m: Measured) => (m.runs.length > 1 ? `${s(m.ms)} (median of ${m.runs.map((r) => s(r.ms)).join(', ')})` : s(m.ms));
    const outcome = (m: Measured) => `${[...new Set(m.runs.map((r) => r.status))].join('/')}   failed targets ${m.failed}   steps not run exactly once ${m.twice}`;
    console.log(`bench:fleet — ${TARGETS} targets (loopback addresses on ${daemons.length} sshd), ${COMMANDS.length} steps each, ${os.cpus().length} cores`);
    console.log(`Bosun, batch_size 20      wall ${wall(b20)}   ${outcome(b20)}`);
    console.log(`   CPU per run${h20 ? ' (with and without the check)' : ''}: ${cpuOf20}`);
    if (h20) console.log(`Bosun, batch_size 20 + health check \`true\` (soak 0)   wall ${wall(h20)}   ${outcome(h20)}   with / without = ${(h20.ms / b20.ms).toFixed(2)}× (goal ≤ 1.15×)`);
    console.log(`Bosun, batch_size 100     wall ${wall(b100)}   ${outcome(b100)}`);
    console.log(c === null ? 'Ansible: skipped (BENCH_ANSIBLE=0, or it could not be had)' : `Ansible, forks 20, serial 20, pipelining + ControlPersist   wall ${s(c)}   Ansible / Bosun (batch 20) = ${(c / b20.ms).toFixed(1)}×`);
    if (chosen) console.log(`   Ansible: ${chosen.label}`);
    console.log(`peak RSS of the process running the API and the worker: ${mib(Math.max(b20.peakRss, b100.peakRss))} (${mib(rssBefore)} before the runs)`);
    if (b20.failed || b100.failed || h20?.failed || b20.twice || b100.twice || h20?.twice) throw new Error('a target failed or a step did not run exactly once');
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
  }
});
