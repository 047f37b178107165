/**
 * npm run bench:copy — a migration plan's directory copy (200 MiB, 310 files) between two local
 * sshd, side by side in one run with the baseline `ssh source tar c | ssh target tar x` (the OpenSSH
 * client, same keys, same sshd, same data). Bosun streams through its worker, resumably, and then
 * compares SHA-256 checksums of every file on both servers: its transfer phase and its whole step
 * (listing, transfer, verification) are reported separately.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bearer, conversationEnded, eventually, type Bosun } from '../support/bosun';
import { runBench } from './harness';
import { Sshd } from '../support/sshd';
import { makeMigrationTree, sharedFolder } from '../support/trees';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const MiB = 1024 * 1024;
const TREE_BYTES = 200 * MiB + 300 * 35 * 1024;

function baseline(work: string, source: Sshd, target: Sshd, from: string, to: string): number {
  const keyOf = (sshd: Sshd) => {
    const key = path.join(work, `client-key-${sshd.info.port}`);
    writeFileSync(key, sshd.info.privateKey, { mode: 0o600 });
    return key;
  };
  const ssh = (sshd: Sshd, command: string) =>
    `ssh -i ${keyOf(sshd)} -p ${sshd.info.port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR ${sshd.info.username}@127.0.0.1 '${command}'`;
  const t0 = performance.now();
  execFileSync('bash', ['-o', 'pipefail', '-c', `${ssh(source, `tar -C ${from} -cf - .`)} | ${ssh(target, `mkdir -p ${to} && tar -C ${to} -xpf -`)}`]);
  return (performance.now() - t0) / 1000;
}

async function bosunCopy(bosun: Bosun, token: string, planId: string, from: string, to: string) {
  const t0 = performance.now();
  const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'migration_plan', chatable_id: planId, message: `copy ${from} to the target at ${to}` });
  const done = await eventually(
    async () => (await bosun.api.get(`/api/v1/conversations/${started.body.data.id}`).set(bearer(token))).body.data,
    conversationEnded,
    600_000,
  );
  const whole = (performance.now() - t0) / 1000;
  if (done.status !== 'completed') throw new Error(`the copy ended ${done.status}:\n${done.steps[0]?.execution_log}`);
  const transfer = /transferred [\d.]+ \w+ in this attempt \(([\d.]+) s/.exec(done.steps[0].execution_log);
  return { whole, transfer: Number(transfer![1]) };
}

runBench({}, async (bosun) => {
  const sshds = [await Sshd.startPrivate(), await Sshd.startPrivate()] as const;
  try {
    const token = await bosun.token('bench');
    const add = async (sshd: Sshd, title: string) => {
      const { port, username, privateKey } = sshd.info;
      const res = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title, host: '127.0.0.1', port, username, auth_method: 'private_key', private_key: privateKey });
      await eventually(async () => (await bosun.api.get(`/api/v1/servers/${res.body.data.id}`).set(bearer(token))).body.data.status, (s) => s === 'verified');
      return res.body.data.id as string;
    };
    const plan = await bosun.api.post('/api/v1/migration-plans').set(bearer(token)).send({ title: 'bench', source_server_id: await add(sshds[0], 'old'), target_server_id: await add(sshds[1], 'new') });

    const work = sharedFolder('bosun-bench-copy-');
    const from = path.join(work, 'source');
    makeMigrationTree(from);
    const baselines: number[] = [];
    const runs: Array<{ whole: number; transfer: number }> = [];
    // Interleaved, so both see the same background load; each round copies into a fresh folder.
    for (let i = 0; i < ROUNDS; i += 1) {
      baselines.push(baseline(work, sshds[0], sshds[1], from, path.join(work, `baseline-${i}`)));
      runs.push(await bosunCopy(bosun, token, plan.body.data.id, from, path.join(work, `bosun-${i}`)));
      execFileSync('rm', ['-rf', path.join(work, `baseline-${i}`), path.join(work, `bosun-${i}`)]);
    }
    const best = (xs: number[]) => Math.min(...xs);
    const rate = (seconds: number) => `${(TREE_BYTES / MiB / seconds).toFixed(0)} MiB/s`;
    const a = best(baselines);
    const b = best(runs.map((r) => r.transfer));
    const c = best(runs.map((r) => r.whole));
    console.log(`bench:copy — 200 MiB in 310 files between two local sshd, ${os.cpus().length} cores, best of ${ROUNDS}`);
    console.log(`(a) baseline ssh … tar c | ssh … tar x        ${a.toFixed(2)} s   ${rate(a)}   rounds: ${baselines.map((x) => x.toFixed(2)).join(', ')} s`);
    console.log(`(b) Bosun transfer phase (through the worker)  ${b.toFixed(2)} s   ${rate(b)}   ×${(b / a).toFixed(2)} baseline`);
    console.log(`(c) Bosun whole step: list, copy, SHA-256 both ${c.toFixed(2)} s   ${rate(c)}   ×${(c / a).toFixed(2)} baseline   rounds: ${runs.map((r) => r.whole.toFixed(2)).join(', ')} s`);
  } finally {
    await Promise.all(sshds.map((s) => s.stop({ dropSessions: true })));
  }
});
