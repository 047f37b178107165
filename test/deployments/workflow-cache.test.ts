import { startBosun } from '../support/bosun';
import { eventually } from '../support/eventually';
import { parseMetrics, valueOf } from '../support/metrics';
import { addFleet, fleetOn, privateFleet } from '../support/server-fleet';

/*
 * WORKER_WORKFLOW_CACHE at 6 on a Bosun of the test's own (two steps at once: four workflow-task
 * slots, so 6 is the bound), with twelve servers — each with a health workflow that stays open —
 * and a fleet run over all twelve: more workflows than the cache holds. What the worker holds is
 * read where operators read it, the Temporal SDK's `temporal_sticky_cache_size` on /metrics.
 */

const ADDRESSES = Array.from({ length: 12 }, (_, i) => `127.0.74.${i + 1}`);
const CACHE = 6;

const fleet = privateFleet({ org: 'workflow-cache', addresses: ADDRESSES, start: () => startBosun({ maxConcurrentSteps: 2, env: { WORKER_WORKFLOW_CACHE: String(CACHE) } }) });

const cachedWorkflows = async () => valueOf(parseMetrics((await fleet.bosun.api.get('/metrics')).text), 'temporal_sticky_cache_size');

/** The most workflows the worker held at any reading (every 100 ms) while `body` ran. */
async function mostCachedDuring(body: () => Promise<void>): Promise<number> {
  let most = 0;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      most = Math.max(most, await cachedWorkflows());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    await body();
  } finally {
    done = true;
    await sampling;
  }
  return Math.max(most, await cachedWorkflows());
}

describe('the worker’s workflow cache (WORKER_WORKFLOW_CACHE)', () => {
  test('twelve servers and a twelve-target run never hold more than the bound in memory; every step still runs once', async () => {
    let deploymentId = '';
    const whileAdding = await mostCachedDuring(async () => {
      fleet.servers = await addFleet(fleet.ops, fleetOn(fleet.sshd.info, ADDRESSES, 'cached'));
    });
    // The metric is there and counts the servers' health workflows (which of them stay cached depends on the order of evictions).
    await eventually(cachedWorkflows, (n) => n > 0, 30_000);
    const whileRunning = await mostCachedDuring(async () => {
      deploymentId = (await fleet.ops.define({
        targets: { server_ids: fleet.servers },
        strategy: { batch_size: ADDRESSES.length },
        steps: [{ name: 'note', command: fleet.record.note('ran') }, { name: 'again', command: 'echo again' }],
      })).id;
      const { run_id: runId } = await fleet.ops.trigger(deploymentId);
      const run = await fleet.ops.waitForRun(deploymentId, runId, undefined, 120_000);
      expect(run).toMatchObject({ status: 'success', summary: { total: ADDRESSES.length, success: ADDRESSES.length } });
    });
    expect(Math.max(whileAdding, whileRunning)).toBeLessThanOrEqual(CACHE);
    for (const address of ADDRESSES) expect(fleet.record.count('ran', address)).toBe(1);
  });
});
