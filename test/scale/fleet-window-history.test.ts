import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { windowGroups } from '../../src/domain/deployments/window';
import { executionsOf } from '../support/executions';
import { fleetTestEnvironment, runMockFleet } from '../support/mock-fleet';

/*
 * A rolling window's run long enough to continue as new (800 targets, a window of 25), on the Temporal
 * dev server the tests run, with mocked activities (as fleet-history.test.ts: most targets fail before
 * their turn, which costs the fleet workflow's history what a run costs it). A window has no "between
 * batches": it continues as new before a group of targets once its history is long, after the running
 * ones ended, its failures carried. Every target starts once, no execution ever holds more than the
 * window running, and each execution's history stays short.
 */

const TARGETS = 800;
const WINDOW = 25;
const BOUND = 10_240;

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await fleetTestEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

test(`a window of ${WINDOW} over ${TARGETS} targets continues as new between groups, never more than ${WINDOW} running, each target once`, async () => {
  const groups = windowGroups(TARGETS, WINDOW, []);
  const run = await runMockFleet(env, {
    plan: { total: TARGETS, batches: groups.at(-1)!, maxFailures: TARGETS, maxConcurrency: WINDOW },
    targetsOf: (batch) => groups.flatMap((group, n) => (group === batch ? [{ runId: `target-${n}`, serverId: `server-${n}`, serverTitle: `node-${n}` }] : [])),
    // One target in fifty runs (no steps); the rest find their server gone and fail at once.
    takeTurn: async (target) => (Number(target.split('-')[1]) % 50 ? { failed: 'Not run: the server no longer exists' } : { turn: true, steps: [] }),
  });
  // The failures of every execution are counted in the run's end.
  expect(run.failure?.cause?.message).toMatch(new RegExp(`^${TARGETS - TARGETS / 50} of ${TARGETS} targets failed \\(${TARGETS} allowed: every target ran\\)`));
  expect(run.status).toBe('failed');
  expect(run.started.size).toBe(TARGETS);
  expect(run.finished.size).toBe(TARGETS / 50);
  const executions = await executionsOf(env.client, deploymentRunWorkflowId(run.runId));
  expect(executions.length).toBeGreaterThanOrEqual(2);
  for (const { events, mostAtOnce } of executions) expect({ events: events < BOUND, window: mostAtOnce <= WINDOW }).toEqual({ events: true, window: true });
  expect(executions.reduce((sum, e) => sum + e.targets, 0)).toBe(TARGETS);
}, 30 * 60_000);
