/**
 * npm run bench:step-cost — bench:deploy's per-step figure (b) alone: one run of BENCH_STEPS `true`
 * steps, BENCH_RUNS times after a warm-up, polled every 20 ms in process; prints the median per step.
 *
 * With BENCH_BASELINE=<a checkout of another commit> (its own node_modules or a link to these), the
 * same bench runs there too, at the same time, and the two take turns run by run (this one, then the
 * baseline, then this one…): each pair of runs is a few seconds apart, so the machine's drift (other
 * jobs on the shared cores) falls on both alike. Prints every pair, each pair's ratio and their median.
 * This file is copied into the baseline's test/bench/ (an older commit may not have it).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { bearer } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';

const N = Number(process.env.BENCH_STEPS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
/** Set by the paired mode for both sides: `<dir>:<me>:<other>`; each run waits for its turn. */
const TURNS = process.env.BENCH_TURNS;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function turn<T>(body: () => Promise<T>): Promise<T> {
  if (!TURNS) return body();
  const [dir, me, other] = TURNS.split(':') as [string, string, string];
  const file = path.join(dir, 'turn');
  while (readFileSync(file, 'utf8') !== me) await new Promise((resolve) => setTimeout(resolve, 10));
  try {
    return await body();
  } finally {
    writeFileSync(file, other);
  }
}

/** CPU seconds so far of this process and of every process it started (mongod, Temporal, sshd…), by command name. */
function cpuByCommand(): Map<string, number> {
  const tick = 100; // USER_HZ
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const totals = new Map<string, number>();
  const visit = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = pid === process.pid ? 'bosun (node)' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      totals.set(name, (totals.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / tick);
    } catch {
      return;
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(process.pid);
  return totals;
}

function measure(): void {
  runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
    const token = await bosun.token('bench');
    const server = await userWithToken(bosun, token).addServer();
    const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'n-steps', server_id: server, steps: Array.from({ length: N }, (_, i) => ({ name: `s${i}`, command: 'true' })) });
    const id = created.body.data.id as string;
    const once = async () => {
      const t0 = performance.now();
      const trigger = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token));
      for (;;) {
        const run = (await bosun.api.get(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data;
        if (['success', 'failed', 'cancelled'].includes(run.status)) {
          if (run.status !== 'success') throw new Error(run.status);
          return (performance.now() - t0) / N;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await turn(once);
    const per: number[] = [];
    const admin = new MongoClient(bosun.mongoUri);
    const opcounters = async () => (await admin.db('admin').command({ serverStatus: 1 })).opcounters as Record<string, number>;
    const opsBefore = await opcounters();
    const cpuBefore = cpuByCommand();
    for (let i = 0; i < RUNS; i += 1) per.push(await turn(once));
    const cpuAfter = cpuByCommand();
    const opsAfter = await opcounters();
    await admin.close();
    console.log(`OPS per step: ${Object.keys(opsAfter).map((op) => `${op} ${((opsAfter[op]! - (opsBefore[op] ?? 0)) / (RUNS * N)).toFixed(2)}`).join(', ')}`);
    // CPU per step, measured runs only (the other side's runs, in paired mode, cost this side nothing but its idle loops).
    const cpu = [...cpuAfter].map(([name, seconds]) => `${name} ${(((seconds - (cpuBefore.get(name) ?? 0)) * 1000) / (RUNS * N)).toFixed(2)}`).join(', ');
    console.log(`CPU ms/step: ${cpu}`);
    console.log(`STEP median ${median(per).toFixed(1)} ms   runs ${per.map((x) => x.toFixed(1)).join(' ')}`);
  });
}

/** Runs this checkout's bench and the baseline's side by side, taking turns; prints the pairs. */
async function paired(baseline: string): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bosun-step-cost-'));
  writeFileSync(path.join(dir, 'turn'), 'now');
  mkdirSync(path.join(baseline, 'test/bench'), { recursive: true });
  copyFileSync(__filename, path.join(baseline, 'test/bench/step-cost.ts'));
  const side = (cwd: string, me: string, other: string) =>
    new Promise<number[]>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/step-cost.ts'], {
        cwd,
        env: { ...process.env, BENCH_BASELINE: '', BENCH_TURNS: `${dir}:${me}:${other}` },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('exit', (code) => {
        const line = out.split('\n').find((l) => l.startsWith('STEP'));
        for (const extra of out.split('\n').filter((l) => l.startsWith('CPU') || l.startsWith('OPS'))) console.log(`${me === 'now' ? 'this    ' : 'baseline'} ${extra}`);
        if (code !== 0 || !line) reject(new Error(`${cwd}: exit ${code}\n${out}`));
        else resolve(line.split('runs ')[1]!.trim().split(' ').map(Number));
      });
    });
  const [now, base] = await Promise.all([side(process.cwd(), 'now', 'base'), side(baseline, 'base', 'now')]);
  const ratios = now.map((value, i) => value / base[i]!);
  console.log('pair   baseline ms/step   this ms/step   ratio');
  ratios.forEach((ratio, i) => console.log(`${String(i + 1).padStart(4)}   ${base[i]!.toFixed(1).padStart(16)}   ${now[i]!.toFixed(1).padStart(12)}   ${ratio.toFixed(3)}`));
  console.log(`STEP-COST baseline median ${median(base).toFixed(1)} ms, this ${median(now).toFixed(1)} ms; median of the ${ratios.length} pairs' ratios ${median(ratios).toFixed(3)}`);
}

if (process.env.BENCH_BASELINE) {
  paired(path.resolve(process.env.BENCH_BASELINE)).then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else measure();
