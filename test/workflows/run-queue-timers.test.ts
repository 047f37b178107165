import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { deploymentRunWorkflowId, fleetTargetWorkflowId, serverRunQueueWorkflowId, WAKE_QUEUE_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import type { NextRun, QueuedRun, QueueWake, StepResult, TurnOutcome } from '../../src/domain/contracts/runs';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { eventually } from '../support/bosun';
import { hasTurnQuery, turnKeepingTarget } from './stand-ins/turn-keeping-target';
import { useTimeSkippingTemporal, type Mocks } from '../support/time-skipping';

/**
 * The server run queue's timers, tens of minutes of them, on Temporal's time-skipping test server
 * with mocked activities: each test takes seconds. What the queue does with real runs is covered
 * end to end (test/deployments) on the dev server.
 */

const MINUTE = 60_000;
const TURN_KEEPING_TARGET = require.resolve('./stand-ins/turn-keeping-target');
const temporal = useTimeSkippingTemporal();

/** Every call of a mocked activity, with the server time it was made at. */
class Timeline {
  readonly calls: Array<{ name: string; at: number }> = [];

  /** The mocks, each recording its calls here first. */
  record(mocks: Mocks): Mocks {
    return Object.fromEntries(
      Object.entries(mocks).map(([name, mock]) => [
        name,
        async (input: unknown) => {
          this.calls.push({ name, at: await temporal().now() });
          return mock(input);
        },
      ]),
    );
  }

  times(name: string): number[] {
    return this.calls.filter((call) => call.name === name).map((call) => call.at);
  }

  /** Waits (in real time, the server's clock held) until `name` has been called `count` times; the time of the last. */
  async untilCalled(name: string, count: number): Promise<number> {
    const times = await eventually(async () => this.times(name), (t) => t.length >= count);
    return times[count - 1]!;
  }
}

/** Whole minutes from one server time to another: a timer of N minutes shows as N (the server's clock also runs in real time while work is done). */
const minutesBetween = (from: number, to: number) => Math.floor((to - from) / MINUTE);
const minutesApart = (times: number[]) => times.slice(1).map((time, i) => minutesBetween(times[i]!, time));

/** The database's queue of runs for `nextQueuedRun`: each read takes the first, none left is null. */
const queueOf = (runs: NextRun[]) => async () => runs.shift() ?? null;
/** A mock that answers each call with the next answer, the last one from then on. */
const scripted = <T>(answers: T[]) => {
  let call = 0;
  return async () => answers[Math.min(call++, answers.length - 1)];
};
const running = { status: 'running', error: null };
const closedByReconcile = { status: 'failed', error: 'The run’s workflow ended without finishing it (terminated in Temporal?)' };

const serverId = () => `srv-${randomBytes(4).toString('hex')}`;
const queuedRun = (server: string): QueuedRun => ({
  runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', serverId: server, deploymentName: 'release', triggeredBy: 'API token: ci', serverTitle: 'web-1',
});
/** A run as the queue reads it next: a one-server run, whose workflow is `deployment-run-<run id>`. */
const nextRun = (run: QueuedRun, extra: Partial<NextRun> = {}): NextRun => ({ ...run, workflowId: deploymentRunWorkflowId(run.runId), fleetTarget: false, ...extra });

const startQueue = (taskQueue: string, server: string) =>
  temporal().env.client.workflow.start('serverRunQueueWorkflow', { taskQueue, workflowId: serverRunQueueWorkflowId(server), args: [{ serverId: server, organizationId: 'org' }] });
/** A waiting run's wake (naming the run: the queue reads the database for the order). */
const wake = (queue: WorkflowHandle, runId = 'a-run') => queue.signal<[QueueWake]>(WAKE_QUEUE_SIGNAL, { runIds: [runId] });
const statusOf = async (handle: WorkflowHandle) => (await handle.describe()).status.name;

describe('an idle queue', () => {
  test('with no run queued, it waits 10 minutes for a wake, then ends', async () => {
    const timeline = new Timeline();
    await temporal().withWorker(timeline.record({ nextQueuedRun: queueOf([]) }), async (taskQueue) => {
      const queue = await startQueue(taskQueue, serverId());
      const idleSince = await timeline.untilCalled('nextQueuedRun', 1);
      await queue.result();
      expect(minutesBetween(idleSince, await temporal().now())).toBe(10);
      expect(timeline.times('nextQueuedRun')).toHaveLength(1);
    });
  });

  test('a wake within the 10 minutes keeps it going: it reads the queue again and waits 10 minutes from then', async () => {
    const timeline = new Timeline();
    await temporal().withWorker(timeline.record({ nextQueuedRun: queueOf([]) }), async (taskQueue) => {
      const queue = await startQueue(taskQueue, serverId());
      const idleSince = await timeline.untilCalled('nextQueuedRun', 1);
      await temporal().env.sleep(9 * MINUTE);
      expect(await statusOf(queue)).toBe('RUNNING');
      await wake(queue);
      const wokenAt = await timeline.untilCalled('nextQueuedRun', 2);
      expect(minutesBetween(idleSince, wokenAt)).toBe(9);
      await queue.result();
      expect(minutesBetween(wokenAt, await temporal().now())).toBe(10);
      expect(timeline.times('nextQueuedRun')).toHaveLength(2);
    });
  });
});

describe('a run holding the turn the queue gave it', () => {
  test('its run is checked every minute; once the run has ended without the turn given back (its workflow terminated), the queue moves on', async () => {
    const server = serverId();
    const target = nextRun(queuedRun(server));
    target.workflowId = fleetTargetWorkflowId(target.runId, server);
    target.fleetTarget = true;
    // The run as the database has it at each check: running, until the worker's reconcile closes it (the workflow is gone).
    const checks = scripted([running, running, running, closedByReconcile]);
    const timeline = new Timeline();
    const queueMocks = timeline.record({ nextQueuedRun: queueOf([target]), endedRun: checks });
    await temporal().withWorker({}, async (standInQueue) => {
      const holder = await temporal().env.client.workflow.start(turnKeepingTarget, { taskQueue: standInQueue, workflowId: target.workflowId });
      await temporal().withWorker(queueMocks, async (taskQueue) => {
        const queue = await startQueue(taskQueue, server);
        const turnGivenAt = await timeline.untilCalled('nextQueuedRun', 1);
        await eventually(() => holder.query(hasTurnQuery), (has) => has);
        await holder.terminate('terminated by hand, holding its turn');
        await queue.result();
        const checkedAt = timeline.times('endedRun');
        expect(minutesApart([turnGivenAt, ...checkedAt])).toEqual([1, 1, 1, 1]);
        // The fourth check found the run ended: the queue read the next run at once, found none, idled 10 minutes.
        const [, movedOnAt] = timeline.times('nextQueuedRun');
        expect(minutesBetween(checkedAt[3]!, movedOnAt!)).toBe(0);
      });
    }, TURN_KEEPING_TARGET);
  });
});

describe('a long-lived queue', () => {
  const oneStep = [{ name: 'restart', command: 'x', timeout_seconds: null, retries: 0, continue_on_error: false }];

  test('once Temporal suggests it (its history past 4 MB), it continues as new when the run it gave the turn to has ended', async () => {
    const server = serverId();
    // A run without a workflow (its trigger's start lost): the queue starts it, its turn given.
    const run = queuedRun(server);
    const queued: NextRun[] = [];
    const timeline = new Timeline();
    const mocks = timeline.record({
      nextQueuedRun: queueOf(queued),
      beginOneServerRun: async () => ({ steps: oneStep, frozen: null }),
      startStep: async (): Promise<StepResult> => ({ status: 'success', exitCode: 0, timedOut: false, endedRun: true }),
      finishRun: async () => undefined,
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const queue = await startQueue(taskQueue, server);
      await timeline.untilCalled('nextQueuedRun', 1);
      await padHistoryPast4MB(queue, timeline);
      expect(await statusOf(queue)).toBe('RUNNING');
      const readsBefore = timeline.times('nextQueuedRun').length;
      queued.push(nextRun(run));
      await wake(queue, run.runId);
      const first = temporal().env.client.workflow.getHandle(queue.workflowId, queue.firstExecutionRunId);
      expect(await eventually(() => statusOf(first), (status) => status !== 'RUNNING')).toBe('CONTINUED_AS_NEW');
      expect(await statusOf(temporal().env.client.workflow.getHandle(deploymentRunWorkflowId(run.runId)))).toBe('COMPLETED');
      // The new execution reads the queue afresh (one read: the first went on to its run), then idles out as any queue does.
      const latest = temporal().env.client.workflow.getHandle(queue.workflowId);
      expect((await latest.describe()).runId).not.toBe(queue.firstExecutionRunId);
      await latest.result();
      expect(timeline.times('nextQueuedRun')).toHaveLength(readsBefore + 2);
    });
  });
});

/** Wakes carrying 100 KB each, a few at a time (each workflow task stays under gRPC's 4 MB), until the history passes 4 MB. */
async function padHistoryPast4MB(queue: WorkflowHandle, timeline: Timeline): Promise<void> {
  const padding = 'x'.repeat(100_000);
  for (let round = 0; round < 10; round += 1) {
    const reads = timeline.times('nextQueuedRun').length;
    await Promise.all(Array.from({ length: 5 }, () => wake(queue, padding)));
    await timeline.untilCalled('nextQueuedRun', reads + 1);
  }
}

describe('a run waiting for its turn', () => {
  test('checks every minute that it still waits (waking its queue again); once it no longer does (cancelled meanwhile), it ends as its run did', async () => {
    const run: QueuedRun = { ...queuedRun(serverId()), place: 3 };
    const timeline = new Timeline();
    const mocks = timeline.record({
      takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }),
      stillWaiting: scripted([true, true, false]),
      beginOneServerRun: async () => ({ steps: null, frozen: null }),
      endedRun: async () => ({ status: 'cancelled', error: null }),
      ...createWorkflowOutcomeActivities(),
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await temporal().env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(run.runId), args: [run] });
      const askedAt = await timeline.untilCalled('takeTurn', 1);
      await expect(handle.result()).rejects.toThrow();
      expect(minutesApart([askedAt, ...timeline.times('stillWaiting')])).toEqual([1, 1, 1]);
      expect(timeline.calls.map((c) => c.name)).toEqual(['takeTurn', 'stillWaiting', 'stillWaiting', 'stillWaiting', 'beginOneServerRun', 'endedRun', 'cancelOwnWorkflow']);
      expect(await statusOf(handle)).toBe('CANCELLED');
    });
  });
});
