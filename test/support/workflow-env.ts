import { randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { createLogger } from '../../src/logger';
import { cachedWorkflowBundle, installTemporalRuntime } from '../../src/worker/temporal-worker';
import { eventually } from './eventually';
import { sharedServices } from './shared';

/*
 * Bosun's workflows on mocked activities, on the Temporal dev server the tests already run
 * (TestWorkflowEnvironment.createFromExistingServer): what each branch calls, and how the workflow
 * ends as the Temporal UI shows it.
 */

export type Call = [name: string, input: unknown];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Mocks = Record<string, (input: any) => Promise<unknown>>;

export interface WorkflowEnv {
  env: TestWorkflowEnvironment;
  /** Runs `body` with a worker whose activities are the given mocks (each call recorded), on a task queue of its own. */
  withWorker<T>(mocks: Mocks, body: (taskQueue: string, calls: Call[]) => Promise<T>): Promise<T>;
  teardown(): Promise<void>;
}

export async function workflowEnv(): Promise<WorkflowEnv> {
  const log = createLogger('silent');
  installTemporalRuntime(log);
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: sharedServices().temporalAddress, namespace: 'default' });
  const workflowBundle = await cachedWorkflowBundle(sharedServices().cacheDir, log);
  return {
    env,
    async withWorker(mocks, body) {
      const taskQueue = `workflow-branches-${randomBytes(4).toString('hex')}`;
      const calls: Call[] = [];
      const recorded = Object.fromEntries(
        Object.entries({ ...createWorkflowOutcomeActivities(), ...mocks }).map(([name, mock]) => [
          name,
          async (input: unknown) => {
            calls.push([name, input]);
            return (mock as (input: unknown) => Promise<unknown>)(input);
          },
        ]),
      );
      // As Bosun's worker: a cancellation reaches a heartbeating activity within a second. The workflows
      // run in the test's own thread (debugMode: the same sandbox): a worker thread started for each
      // test's worker cost more than the workflows it ran (failure-branches: 25 s of CPU against 15).
      const worker = await Worker.create({
        connection: env.nativeConnection, namespace: 'default', taskQueue, workflowBundle, activities: recorded,
        maxHeartbeatThrottleInterval: '1 second', defaultHeartbeatThrottleInterval: '1 second', debugMode: true,
      });
      return worker.runUntil(() => body(taskQueue, calls));
    },
    teardown: () => env.teardown(),
  };
}

/** The names of the activities called, in order. */
export const names = (calls: Call[]) => calls.map(([name]) => name);

/** How a workflow ended, as the Temporal UI shows it (COMPLETED, FAILED, CANCELLED…), once it has. */
export const outcome = async (handle: WorkflowHandle) => (await eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING')).status.name;

/** What a workflow says it is doing now (its current details in the Temporal UI). */
export const currentDetails = async (handle: WorkflowHandle) => (await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails ?? '';

/** An activity that heartbeats until it is cancelled (so the cancellation reaches it), then throws it. */
export const untilCancelled = async () => {
  for (;;) {
    Context.current().heartbeat();
    await Promise.race([Context.current().cancelled, new Promise((r) => setTimeout(r, 200))]);
  }
};
