import { randomBytes } from 'node:crypto';
import type { WorkflowFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import type { FleetPlan, FleetRunInput, FleetTarget } from '../../src/domain/contracts/runs';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { sharedServices } from './shared';

/*
 * The fleet workflow alone, on the Temporal dev server the tests run, with mocked activities: what the
 * scale tests measure is the fleet workflow's own history and window, which hold the same events for a
 * target however it ends, so most targets are made to fail before their turn (as cheap as a target can be).
 */

const log = createLogger('silent');

/** The dev server as a test environment, for a file's `beforeAll`; `teardown()` it in `afterAll`. */
export async function fleetTestEnvironment(): Promise<TestWorkflowEnvironment> {
  installTemporalRuntime(log);
  return TestWorkflowEnvironment.createFromExistingServer({ address: sharedServices().temporalAddress, namespace: 'default' });
}

export type TakeTurn = (target: string) => Promise<{ failed: string } | { turn: true; steps: [] } | { queued: true }>;

export interface MockFleetRun {
  /** The run's id: its workflow is deploymentRunWorkflowId(runId). */
  runId: string;
  /** Targets whose turn was asked for. */
  started: Set<string>;
  /** Targets whose end was recorded (once each, however often the finish activity is retried, as the store's transition). */
  finished: Set<string>;
  /** The fleet run's own recorded end. */
  status: string | null;
  /** The workflow's failure (the error its result threw), or null when it succeeded. */
  failure: WorkflowFailedError | null;
}

/**
 * One fleet run of `plan` on its own task queue and worker: `targetsOf(batch)` the targets of a batch
 * (or window group), `takeTurn` each target's turn (fail it, run it with no steps, or queue it).
 */
export async function runMockFleet(
  env: TestWorkflowEnvironment,
  { plan, targetsOf, takeTurn }: { plan: FleetPlan; targetsOf: (batch: number) => FleetTarget[]; takeTurn: TakeTurn },
): Promise<MockFleetRun> {
  const run: MockFleetRun = { runId: randomBytes(12).toString('hex'), started: new Set(), finished: new Set(), status: null, failure: null };
  const activities = {
    ...createWorkflowOutcomeActivities(),
    beginFleet: async () => plan,
    batchTargets: async ({ batch }: { batch: number }) => targetsOf(batch),
    takeTurn: async ({ runId: target }: { runId: string }) => {
      run.started.add(target);
      return takeTurn(target);
    },
    beginRun: async () => [],
    beginOneServerRun: async () => ({ steps: [], frozen: null }),
    endedRun: async () => null,
    finishRun: async ({ runId: id, status }: { runId: string; status: string }) => {
      if (id === run.runId) run.status = status;
      else run.finished.add(id);
    },
    closeWaitingTargets: async () => 0,
    // No change freeze holds a batch.
    holdIfFrozen: async () => null,
    cancelQueuedRun: async () => undefined,
    skipSteps: async () => undefined,
    cancelSteps: async () => undefined,
    failRunStep: async () => undefined,
  };
  const taskQueue = `mock-fleet-${randomBytes(4).toString('hex')}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await cachedWorkflowBundle(sharedServices().cacheDir, log),
    activities,
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentLocalActivityExecutions: 400,
  });
  const input: FleetRunInput = { runId: run.runId, organizationId: 'org', deploymentId: 'dep', deploymentName: 'release', triggeredBy: 'API token: ci' };
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('deploymentFleetWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(run.runId), args: [input] });
    run.failure = await handle.result().then(
      () => null,
      (error: WorkflowFailedError) => error,
    );
  });
  return run;
}
