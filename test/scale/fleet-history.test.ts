import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { deploymentRunWorkflowId, TURN_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { MAX_BATCH_SIZE } from '../../src/domain/contracts/runs';
import { executionsOf } from '../support/executions';
import { fleetTestEnvironment, runMockFleet } from '../support/mock-fleet';

/*
 * A fleet run of a full batch and a tenth of another (1,100 targets), on the Temporal dev server the
 * tests run, with mocked activities (targets have no step, and most fail before their turn: what is
 * measured is the fleet workflow's own history (test/support/mock-fleet.ts), which holds the same events for a target however it
 * ends). Its history must stay bounded however many targets a run has: the workflow continues as new
 * between batches once its history is long, so each execution after the first starts afresh and
 * holds at most one full batch (MAX_BATCH_SIZE targets), far from Temporal's limits (51,200 events; a
 * warning at 10,240). This run shows both halves of that: the largest batch there is fits in one
 * execution, and the run goes on in a new execution after it, its progress carried (the failures of
 * the first batch are counted in the run's end); more batches would only repeat the second.
 * FLEET_HISTORY_TARGETS=10000 runs ten full batches, as this test once did (about 7 minutes on 2 idle
 * cores).
 *
 * The dev server starts about 30 workflows a second here, so `npm test` runs it on its own before the
 * other suites (`npm run test:scale`), where it competes with nothing.
 */

const TARGETS = Number(process.env.FLEET_HISTORY_TARGETS ?? MAX_BATCH_SIZE + MAX_BATCH_SIZE / 10);
const BOUND = 10_240;
const BATCH = Number(process.env.FLEET_HISTORY_BATCH ?? MAX_BATCH_SIZE);

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await fleetTestEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

test(`a fleet run of ${TARGETS} targets goes through every batch, each target once, its history bounded by continuing as new`, async () => {
  const batches = Math.ceil(TARGETS / BATCH);
  const run = await runMockFleet(env, {
    plan: { total: TARGETS, batches, maxFailures: TARGETS },
    targetsOf: (batch) =>
      Array.from({ length: Math.min(BATCH, TARGETS - (batch - 1) * BATCH) }, (_, i) => {
        const n = (batch - 1) * BATCH + i;
        return { runId: `target-${n}`, serverId: `server-${n}`, serverTitle: `web-${n}` };
      }),
    // One target in a hundred runs: one in two hundred waits for its turn (the activity signals its
    // own workflow, as the queue would), the others of those take it at once; the rest find their
    // server gone and fail at once.
    takeTurn: async (target) => {
      const n = Number(target.split('-')[1]);
      if (n % 100) return { failed: 'Not run: the server no longer exists' };
      if (n % 200) return { turn: true, steps: [] };
      const { workflowId } = Context.current().info.workflowExecution!;
      await Context.current().client.workflow.getHandle(workflowId).signal(TURN_SIGNAL);
      return { queued: true };
    },
  });
  expect(run.failure?.cause?.message).toMatch(new RegExp(`^${TARGETS - TARGETS / 100} of ${TARGETS} targets failed \\(${TARGETS} allowed: every batch ran\\)`));
  expect(run.status).toBe('failed');
  expect(run.started.size).toBe(TARGETS);
  // The targets that ran, each once.
  expect(run.finished.size).toBe(TARGETS / 100);
  expect([...run.finished].filter((id) => Number(id.replace('target-', '')) % 100 !== 0)).toEqual([]);
  // Every execution of the fleet workflow (one per continue-as-new, followed from the first) kept its
  // history short, and started at most one batch of targets: what bounds a run of any size.
  const executions = await executionsOf(env.client, deploymentRunWorkflowId(run.runId));
  expect(executions.length).toBeGreaterThanOrEqual(Math.min(batches, 2));
  for (const { events, targets } of executions) expect({ events: events < BOUND, targets: targets <= BATCH }).toEqual({ events: true, targets: true });
  expect(executions.reduce((sum, e) => sum + e.targets, 0)).toBe(TARGETS);
  // A guard against a hang, not a speed check: about a minute on 2 idle cores for 1,100 targets.
}, 45 * 60_000);
