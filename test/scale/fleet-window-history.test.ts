import { randomBytes } from 'node:crypto';
import type { WorkflowFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import type { FleetPlan, FleetRunInput, FleetTarget } from '../../src/domain/contracts/runs';
import { windowGroups } from '../../src/domain/deployments/window';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { sharedServices } from '../support/shared';
import { executionsOf } from '../support/executions';

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
const log = createLogger('silent');

beforeAll(async () => {
  installTemporalRuntime(log);
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: sharedServices().temporalAddress, namespace: 'default' });
});
afterAll(async () => {
  await env?.teardown();
});

test(`a window of ${WINDOW} over ${TARGETS} targets continues as new between groups, never more than ${WINDOW} running, each target once`, async () => {
  const taskQueue = `fleet-window-${randomBytes(4).toString('hex')}`;
  const runId = randomBytes(12).toString('hex');
  const groups = windowGroups(TARGETS, WINDOW, []);
  const plan: FleetPlan = { total: TARGETS, batches: groups.at(-1)!, maxFailures: TARGETS, maxConcurrency: WINDOW };
  const started = new Set<string>();
  const finished = new Set<string>();
  let fleetStatus: string | null = null;
  const activities = {
    ...createWorkflowOutcomeActivities(),
    beginFleet: async () => plan,
    batchTargets: async ({ batch }: { batch: number }): Promise<FleetTarget[]> =>
      groups.flatMap((group, n) => (group === batch ? [{ runId: `target-${n}`, serverId: `server-${n}`, serverTitle: `node-${n}` }] : [])),
    // One target in fifty runs (no steps); the rest find their server gone and fail at once.
    takeTurn: async ({ runId: target }: { runId: string }) => {
      started.add(target);
      return Number(target.split('-')[1]) % 50 ? { failed: 'Not run: the server no longer exists' } : { turn: true, steps: [] };
    },
    beginRun: async () => [],
    beginOneServerRun: async () => ({ steps: [], frozen: null }),
    endedRun: async () => null,
    finishRun: async ({ runId: id, status }: { runId: string; status: string }) => {
      if (id === runId) fleetStatus = status;
      else finished.add(id);
    },
    closeWaitingTargets: async () => 0,
    holdIfFrozen: async () => null,
    cancelQueuedRun: async () => undefined,
    skipSteps: async () => undefined,
    cancelSteps: async () => undefined,
    failRunStep: async () => undefined,
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await cachedWorkflowBundle(sharedServices().cacheDir, log),
    activities,
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentLocalActivityExecutions: 400,
  });
  const input: FleetRunInput = { runId, organizationId: 'org', deploymentId: 'dep', deploymentName: 'release', triggeredBy: 'API token: ci' };
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('deploymentFleetWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(runId), args: [input] });
    const failure = await handle.result().catch((error: WorkflowFailedError) => error);
    // The failures of every execution are counted in the run's end.
    expect((failure as WorkflowFailedError).cause?.message).toMatch(new RegExp(`^${TARGETS - TARGETS / 50} of ${TARGETS} targets failed \\(${TARGETS} allowed: every target ran\\)`));
  });

  expect(fleetStatus).toBe('failed');
  expect(started.size).toBe(TARGETS);
  expect(finished.size).toBe(TARGETS / 50);
  const executions = await executionsOf(env.client, deploymentRunWorkflowId(runId));
  expect(executions.length).toBeGreaterThanOrEqual(2);
  for (const { events, mostAtOnce } of executions) expect({ events: events < BOUND, window: mostAtOnce <= WINDOW }).toEqual({ events: true, window: true });
  expect(executions.reduce((sum, e) => sum + e.targets, 0)).toBe(TARGETS);
}, 30 * 60_000);
