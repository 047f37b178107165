import { randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkflowFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { deploymentRunWorkflowId, TURN_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { MAX_BATCH_SIZE, type FleetRunInput, type FleetTarget } from '../../src/domain/contracts/runs';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { sharedServices } from '../support/shared';
import { executionsOf } from '../support/executions';

/*
 * A fleet run of a full batch and a tenth of another (1,100 targets), on the Temporal dev server the
 * tests run, with mocked activities (targets have no step, and most fail before their turn: what is
 * measured is the fleet workflow's own history, which holds the same events for a target however it
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
const log = createLogger('silent');

beforeAll(async () => {
  installTemporalRuntime(log);
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: sharedServices().temporalAddress, namespace: 'default' });
});
afterAll(async () => {
  await env?.teardown();
});

test(`a fleet run of ${TARGETS} targets goes through every batch, each target once, its history bounded by continuing as new`, async () => {
  const taskQueue = `fleet-history-${randomBytes(4).toString('hex')}`;
  const runId = randomBytes(12).toString('hex');
  const batches = Math.ceil(TARGETS / BATCH);
  const started = new Set<string>();
  // Like the store's transition, a finish is recorded once: a finish activity retried (at least once,
  // as every activity; it happens when a loaded machine answers past its timeout) changes nothing.
  const finished = new Set<string>();
  let fleetStatus: string | null = null;
  const activities = {
    ...createWorkflowOutcomeActivities(),
    beginFleet: async () => ({ total: TARGETS, batches, maxFailures: TARGETS }),
    batchTargets: async ({ batch }: { batch: number }): Promise<FleetTarget[]> =>
      Array.from({ length: Math.min(BATCH, TARGETS - (batch - 1) * BATCH) }, (_, i) => {
        const n = (batch - 1) * BATCH + i;
        return { runId: `target-${n}`, serverId: `server-${n}`, serverTitle: `web-${n}` };
      }),
    // One target in a hundred runs: one in two hundred waits for its turn (the activity signals its
    // own workflow, as the queue would), the others of those take it at once; the rest find their
    // server gone and fail at once: a target as cheap as can be.
    takeTurn: async ({ runId: target }: { runId: string }) => {
      started.add(target);
      const n = Number(target.split('-')[1]);
      if (n % 100) return { failed: 'Not run: the server no longer exists' };
      if (n % 200) return { turn: true, steps: [] };
      const { workflowId } = Context.current().info.workflowExecution!;
      await Context.current().client.workflow.getHandle(workflowId).signal(TURN_SIGNAL);
      return { queued: true };
    },
    beginRun: async () => [],
    beginOneServerRun: async () => ({ steps: [], frozen: null }),
    endedRun: async () => null,
    finishRun: async ({ runId: id, status }: { runId: string; status: string }) => {
      if (id === runId) fleetStatus = status;
      else finished.add(id);
    },
    closeWaitingTargets: async () => 0,
    // No change freeze holds a batch.
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
    expect((failure as WorkflowFailedError).cause?.message).toMatch(new RegExp(`^${TARGETS - TARGETS / 100} of ${TARGETS} targets failed \\(${TARGETS} allowed: every batch ran\\)`));
  });

  expect(fleetStatus).toBe('failed');
  expect(started.size).toBe(TARGETS);
  // The targets that ran, each once.
  expect(finished.size).toBe(TARGETS / 100);
  expect([...finished].filter((id) => Number(id.replace('target-', '')) % 100 !== 0)).toEqual([]);
  // Every execution of the fleet workflow (one per continue-as-new, followed from the first) kept its
  // history short, and started at most one batch of targets: what bounds a run of any size.
  const executions = await executionsOf(env.client, deploymentRunWorkflowId(runId));
  expect(executions.length).toBeGreaterThanOrEqual(Math.min(batches, 2));
  for (const { events, targets } of executions) expect({ events: events < BOUND, targets: targets <= BATCH }).toEqual({ events: true, targets: true });
  expect(executions.reduce((sum, e) => sum + e.targets, 0)).toBe(TARGETS);
  // A guard against a hang, not a speed check: about a minute on 2 idle cores for 1,100 targets.
}, 45 * 60_000);
