/**
 * npm run bench:pipeline — what a pipeline costs over the deployments it runs, side by side in one
 * run on one server: (a) baseline, ten one-step deployments triggered back to back by a client that
 * waits for each (polling every 20 ms, as a CI script chaining them would); (b) Bosun, one 10-stage
 * linear pipeline of the same ten deployments, trigger to `success` seen by the same polling.
 * Alternated BENCH_ROUNDS times; medians and the ratio (goal ≤ 1.3×).
 */
import { bearer, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { runBench } from './harness';

const STAGES = Number(process.env.BENCH_STAGES ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const POLL_MS = 20;
const FINAL = ['success', 'failed', 'cancelled'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function until(bosun: Bosun, token: string, path: string): Promise<{ status: string }> {
  for (;;) {
    const item = (await bosun.api.get(path).set(bearer(token))).body.data;
    if (FINAL.includes(item.status)) return item;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The ten deployments one after another, each triggered once the one before succeeded. */
async function chained(bosun: Bosun, token: string, deployments: string[]): Promise<number> {
  const t0 = performance.now();
  for (const id of deployments) {
    const runId = (await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token))).body.run_id as string;
    const run = await until(bosun, token, `/api/v1/deployments/${id}/runs/${runId}`);
    if (run.status !== 'success') throw new Error(`a chained run ended ${run.status}`);
  }
  return performance.now() - t0;
}

async function pipelined(bosun: Bosun, token: string, pipelineId: string): Promise<number> {
  const t0 = performance.now();
  const runId = (await bosun.api.post(`/api/v1/pipelines/${pipelineId}/run`).set(bearer(token)).send({})).body.run_id as string;
  const run = await until(bosun, token, `/api/v1/pipelines/${pipelineId}/runs/${runId}`);
  if (run.status !== 'success') throw new Error(`the pipeline run ended ${run.status}`);
  return performance.now() - t0;
}

runBench({ rateLimitPerMinute: 1_000_000 }, async (bosun) => {
  const token = await bosun.token('bench-pipeline');
  const serverId = await userWithToken(bosun, token).addServer();
  const deployments: string[] = [];
  for (let i = 0; i < STAGES; i += 1) {
    const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: `stage-${i}`, server_id: serverId, steps: [{ name: 'step', command: 'true' }] });
    deployments.push(created.body.data.id as string);
  }
  const stages = deployments.map((id, i) => ({ name: `s${i}`, deployment: id, ...(i ? { needs: [`s${i - 1}`] } : {}) }));
  const pipeline = await bosun.api.post('/api/v1/pipelines').set(bearer(token)).send({ name: 'linear', stages });
  if (pipeline.status !== 201) throw new Error(`define the pipeline: ${pipeline.status} ${JSON.stringify(pipeline.body)}`);
  const pipelineId = pipeline.body.data.id as string;
  // Warm-up: both paths once (workflow bundle, connections, caches).
  await chained(bosun, token, deployments);
  await pipelined(bosun, token, pipelineId);
  const chain: number[] = [];
  const pipe: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    chain.push(await chained(bosun, token, deployments));
    pipe.push(await pipelined(bosun, token, pipelineId));
  }
  const ratio = median(pipe) / median(chain);
  console.log(`${STAGES} one-step deployments on one server, ${ROUNDS} rounds alternated (medians; min–max):`);
  console.log(`  (a) chained by a client that waits for each: ${(median(chain) / 1000).toFixed(2)} s (${(Math.min(...chain) / 1000).toFixed(2)}–${(Math.max(...chain) / 1000).toFixed(2)})`);
  console.log(`  (b) one ${STAGES}-stage pipeline:              ${(median(pipe) / 1000).toFixed(2)} s (${(Math.min(...pipe) / 1000).toFixed(2)}–${(Math.max(...pipe) / 1000).toFixed(2)})`);
  console.log(`  pipeline / chained: ${ratio.toFixed(2)}× (goal ≤ 1.3×)`);
});
