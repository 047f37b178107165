/**
 * npm run bench:triggers — triggers at a sustained rate, as many CI jobs send them: 10 a second for
 * 60 s (RATE, SECONDS), round robin over 10 CI tokens each triggering its own deployment on its own
 * server (10 loopback addresses of the test sshd), from a client process of its own on keep-alive
 * connections (paced-client.ts). Reports the triggers' p50 / p95 / p99 / max beside the same
 * process's HTTP floor at the same moments (`GET /healthz`, half a period after each trigger), the
 * longest the event loop of the process running the API and the worker was held, and that every run
 * succeeded. Issue 39's goal: p99 ≤ 40 ms at 10/s.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { bearer, eventually, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { LOOPBACK_ADDRESSES } from '../support/sshd';
import { runBench } from './harness';

const RATE = Number(process.env.RATE ?? 10);
const SECONDS = Number(process.env.SECONDS ?? 60);
const CLIENTS = 10;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const summary = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)}  p95 ${percentile(xs, 95).toFixed(1)}  p99 ${percentile(xs, 99).toFixed(1)}  max ${Math.max(...xs).toFixed(1)} ms`;

interface Paced {
  triggers: Array<{ ms: number; status: number; runId: string }>;
  health: number[];
}

function paced(bosun: Bosun, targets: Array<{ token: string; deploymentId: string }>, seconds: number): Promise<Paced> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'paced-client.ts')], {
      env: { ...process.env, BOSUN_URL: bosun.url, TARGETS: JSON.stringify(targets), RATE: String(RATE), SECONDS: String(seconds) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Paced) : reject(new Error(`the trigger client exited with ${code}`))));
  });
}

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const admin = userWithToken(bosun, await bosun.token('bench-triggers'));
  const targets: Array<{ token: string; deploymentId: string }> = [];
  for (let i = 0; i < CLIENTS; i += 1) {
    const server = await admin.addServer({ host: LOOPBACK_ADDRESSES[i]!, title: `ci-${i}` });
    const deployment = (await admin.define({ name: `release-${i}`, server_id: server, steps: [{ name: 'ship', command: 'true' }] })).id as string;
    const account = await admin.request('post', '/service-accounts', { name: `ci-${i}` });
    await admin.request('post', '/role-bindings', { role: 'deployer', subject: { type: 'service_account', id: account.body.data.id } });
    const token = (await admin.request('post', `/service-accounts/${account.body.data.id}/tokens`, { name: `ci-${i}-token` })).body.data.token as string;
    targets.push({ token, deploymentId: deployment });
  }
  // A warm-up of 10 s (JIT, connections, first workflows), then the measured minute.
  await paced(bosun, targets, 10);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const measured = await paced(bosun, targets, SECONDS);
  loop.disable();
  const refused = measured.triggers.filter((t) => t.status !== 202);
  if (refused.length) throw new Error(`${refused.length} triggers answered other than 202 (${refused[0]!.status})`);
  // Every run ends, and succeeds: a fast answer to a run that never ran would be no answer.
  const byId = new Map(targets.map((t, i) => [i, t]));
  let failed = 0;
  for (const [i, trigger] of measured.triggers.entries()) {
    const { token, deploymentId } = byId.get(i % CLIENTS)!;
    const run = await eventually(
      async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.runId}`).set(bearer(token))).body.data,
      (r: { status: string }) => ['success', 'failed', 'cancelled'].includes(r.status),
      300_000,
    );
    if (run.status !== 'success') failed += 1;
  }
  const ms = measured.triggers.map((t) => t.ms);
  console.log(`bench:triggers — ${ms.length} triggers at ${RATE}/s over ${SECONDS} s, ${CLIENTS} CI tokens and servers (keep-alive connections)`);
  console.log(`  triggers        ${summary(ms)}`);
  console.log(`  GET /healthz    ${summary(measured.health)}   (the same process's HTTP floor, between the triggers)`);
  console.log(`  event loop held at most ${(loop.max / 1e6).toFixed(0)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms); runs failed: ${failed}`);
  console.log(`  goal (issue 39): p99 ≤ 40 ms — ${percentile(ms, 99) <= 40 ? 'met' : 'not met'}`);
  if (failed) throw new Error(`${failed} runs did not succeed`);
});
