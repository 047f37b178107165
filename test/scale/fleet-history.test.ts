import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { deploymentRunWorkflowId, fleetTargetGroupWorkflowId, TURN_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { MAX_BATCH_SIZE } from '../../src/domain/contracts/runs';
import { executionsOf } from '../support/executions';
import { fleetTestEnvironment, runMockFleet } from '../support/mock-fleet';

/*
 * A fleet run of a full batch (1,000 targets, run in groups of targets sharing a workflow) and then
 * 300 batches of one target, on the Temporal dev server the tests run, with mocked activities
 * (targets have no step, and most fail before their turn: what is measured is the fleet workflow's
 * own history (test/support/mock-fleet.ts), which holds the same events for a target however it
 * ends). Its history must stay bounded however many targets and batches a run has: a batch costs
 * the fleet's history a few events per group of its targets and a dozen of its own, and the workflow
 * continues as new between batches once its history is long, so each execution after the first
 * starts afresh. This run shows both: the largest batch there is fits in one execution, and the
 * run's many small batches go on in new executions, its progress carried (the failures of the first
 * batch are counted in the run's end). FLEET_HISTORY_FULL_BATCHES=10 runs ten full batches (10,300
 * targets).
 *
 * The dev server starts about 30 workflows a second here, so `npm test` runs it on its own before the
 * other suites (`npm run test:scale`), where it competes with nothing.
 */

const BATCH = MAX_BATCH_SIZE;
const FULL_BATCHES = Number(process.env.FLEET_HISTORY_FULL_BATCHES ?? 1);
const SMALL_BATCHES = 300;
const TARGETS = FULL_BATCHES * BATCH + SMALL_BATCHES;
const BOUND = 10_240;

/** The targets of batch `batch` (from 1): full batches first, then one target each; numbered across the run. */
function batchTargets(batch: number) {
  const full = batch <= FULL_BATCHES;
  const first = full ? (batch - 1) * BATCH : FULL_BATCHES * BATCH + (batch - FULL_BATCHES - 1);
  return Array.from({ length: full ? BATCH : 1 }, (_, i) => ({ runId: `target-${first + i}`, serverId: `server-${first + i}`, serverTitle: `web-${first + i}` }));
}

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await fleetTestEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

test(`a fleet run of ${TARGETS} targets goes through every batch, each target once, its history bounded by continuing as new`, async () => {
  const batches = FULL_BATCHES + SMALL_BATCHES;
  const run = await runMockFleet(env, {
    plan: { total: TARGETS, batches, maxFailures: TARGETS },
    targetsOf: batchTargets,
    // One target in a hundred runs: one in two hundred waits for its turn (the activity signals the
    // workflow it runs in, naming it, as the queue would), the others of those take it at once; the
    // rest find their server gone and fail at once.
    takeTurn: async (target) => {
      const n = Number(target.split('-')[1]);
      if (n % 100) return { failed: 'Not run: the server no longer exists' };
      if (n % 200) return { turn: true, steps: [] };
      const { workflowId } = Context.current().info.workflowExecution!;
      await Context.current().client.workflow.getHandle(workflowId).signal(TURN_SIGNAL, target);
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
  // history short, and had at most one batch of targets running at once: what bounds a run of any size.
  const executions = await executionsOf(env.client, deploymentRunWorkflowId(run.runId));
  expect(executions.length).toBeGreaterThanOrEqual(2);
  for (const { events, mostAtOnce } of executions) expect({ events: events < BOUND, atOnce: mostAtOnce <= BATCH }).toEqual({ events: true, atOnce: true });
  expect(executions.reduce((sum, e) => sum + e.targets, 0)).toBe(TARGETS);
  // A full batch ran in groups of at most TARGET_GROUP_SIZE targets, each group's history short too.
  const group = await env.client.workflow.getHandle(fleetTargetGroupWorkflowId(run.runId, 1, 1)).describe();
  expect({ type: group.type, events: group.historyLength < BOUND }).toEqual({ type: 'fleetTargetGroupWorkflow', events: true });
  expect(executions[0]!.mostAtOnce).toBe(BATCH);
  // A guard against a hang, not a speed check.
}, 45 * 60_000);
