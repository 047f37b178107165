/**
 * npm run bench:step-cost — bench:deploy's per-step figure (b) alone: one run of BENCH_STEPS `true`
 * steps, BENCH_RUNS times after a warm-up, polled every 20 ms in process; prints the median per step.
 * Quick enough to alternate with another commit's copy (copy this file into its worktree) several times.
 */
import { bearer } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';

const N = Number(process.env.BENCH_STEPS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

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
  await once();
  const per: number[] = [];
  for (let i = 0; i < RUNS; i += 1) per.push(await once());
  const sorted = [...per].sort((a, b) => a - b);
  console.log(`STEP median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms   runs ${per.map((x) => x.toFixed(1)).join(' ')}`);
});
