import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { executionRecord } from '../support/fixtures';
import { parseMetrics, valueOf } from '../support/metrics';
import { Sshd } from '../support/sshd';
import { addFleet, fleetOn } from '../support/server-fleet';

/*
 * WORKER_WORKFLOW_CACHE at 6 on a Bosun of the test's own (two steps at once: four workflow-task
 * slots, so 6 is the bound), with twelve servers — each with a health workflow that stays open —
 * and a fleet run over all twelve: more workflows than the cache holds. What the worker holds is
 * read where operators read it, the Temporal SDK's `temporal_sticky_cache_size` on /metrics.
 */

const ADDRESSES = Array.from({ length: 12 }, (_, i) => `127.0.74.${i + 1}`);
const CACHE = 6;

let sshd: Sshd;
let bosun: Bosun;
let ops: User;
let servers: string[];
const record = executionRecord('workflow-cache');

const cachedWorkflows = async () => valueOf(parseMetrics((await bosun.api.get('/metrics')).text), 'temporal_sticky_cache_size');

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

beforeAll(async () => {
  sshd = await Sshd.startPrivate(ADDRESSES);
  bosun = await startBosun({ maxConcurrentSteps: 2, env: { WORKER_WORKFLOW_CACHE: String(CACHE) } });
  ops = await asUser(bosun, 'workflow-cache');
}, 120_000);
afterAll(async () => {
  ops?.close();
  await bosun?.stop();
  await sshd?.stop({ dropSessions: true });
  record.remove();
});

describe('the worker’s workflow cache (WORKER_WORKFLOW_CACHE)', () => {
  test('twelve servers and a twelve-target run never hold more than the bound in memory; every step still runs once', async () => {
    let deploymentId = '';
    const whileAdding = await mostCachedDuring(async () => {
      servers = await addFleet(ops, fleetOn(sshd.info, ADDRESSES, 'cached'));
    });
    // The metric is there and counts the servers' health workflows (which of them stay cached depends on the order of evictions).
    await eventually(cachedWorkflows, (n) => n > 0, 30_000);
    const whileRunning = await mostCachedDuring(async () => {
      deploymentId = (await ops.define({
        targets: { server_ids: servers },
        strategy: { batch_size: ADDRESSES.length },
        steps: [{ name: 'note', command: record.note('ran') }, { name: 'again', command: 'echo again' }],
      })).id;
      const { run_id: runId } = await ops.trigger(deploymentId);
      const run = await ops.waitForRun(deploymentId, runId, undefined, 120_000);
      expect(run).toMatchObject({ status: 'success', summary: { total: ADDRESSES.length, success: ADDRESSES.length } });
    });
    expect(Math.max(whileAdding, whileRunning)).toBeLessThanOrEqual(CACHE);
    for (const address of ADDRESSES) expect(record.count('ran', address)).toBe(1);
  });
});
