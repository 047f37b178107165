import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import {
  deploymentRunWorkflowId,
  fleetTargetWorkflowId,
  serverRunQueueWorkflowId,
  WAKE_QUEUE_SIGNAL,
  type QueuedRun,
  type StepResult,
} from '../../workflows/contracts';
import { eventually } from '../support/bosun';
import { hasTurnQuery, turnKeepingTarget } from './stand-ins/turn-keeping-target';
import { TimeSkippingTemporal, type Mocks } from '../support/time-skipping';

/**
 * The server run queue's timers, minutes and hours of them, on Temporal's time-skipping test server
 * with mocked activities: each test takes seconds. What the queue does with real runs is covered
 * end to end (test/deployments) on the dev server.
 */

const MINUTE = 60_000;
const STAND_INS = require.resolve('./stand-ins/turn-keeping-target');
let temporal: TimeSkippingTemporal;

beforeAll(async () => {
  temporal = await TimeSkippingTemporal.start();
}, 300_000);
afterAll(async () => {
  await temporal?.stop();
});

/** Every call of a mocked activity, with the server time it was made at. */
class Timeline {
  readonly calls: Array<{ name: string; input: unknown; at: number }> = [];

  /** The mocks, each recording its calls here first. */
  record(mocks: Mocks): Mocks {
    return Object.fromEntries(
      Object.entries(mocks).map(([name, mock]) => [
        name,
        async (input: unknown) => {
          this.calls.push({ name, input, at: await temporal.now() });
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

const gaps = (times: number[]) => times.slice(1).map((time, i) => time - times[i]!);
/** A timer of a minute fired: at least a minute, plus the little real time the test server's clock ran meanwhile. */
const aboutAMinute = (gap: number) => gap >= MINUTE && gap < 1.5 * MINUTE;

/** A mock that answers each call with the next answer, the last one from then on. */
const scripted = <T>(answers: T[]) => {
  let call = 0;
  return async () => answers[Math.min(call++, answers.length - 1)];
};
/** A queue with this one run in it, taken by the first read. */
const once = (run: QueuedRun) => scripted<QueuedRun | null>([run, null]);
const running = { status: 'running', error: null };
const closedByReconcile = { status: 'failed', error: 'The run’s workflow ended without finishing it (terminated in Temporal?)' };

const serverId = () => `srv-${randomBytes(4).toString('hex')}`;
const queuedRun = (server: string, extra: Partial<QueuedRun> = {}): QueuedRun => ({
  runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', serverId: server, deploymentName: 'release', triggeredBy: 'API token: ci', serverTitle: 'web-1', ...extra,
});

const startQueue = (taskQueue: string, server: string) =>
  temporal.env.client.workflow.start('serverRunQueueWorkflow', { taskQueue, workflowId: serverRunQueueWorkflowId(server), args: [{ serverId: server, organizationId: 'org' }] });
/** A trigger's wake (it carries nothing: the queue reads the database). */
const wake = (queue: WorkflowHandle) => queue.signal(WAKE_QUEUE_SIGNAL);
const statusOf = async (handle: WorkflowHandle) => (await handle.describe()).status.name;

describe('an idle queue', () => {
  test('with no run queued, it waits 10 minutes for a wake, then ends', async () => {
    const timeline = new Timeline();
    await temporal.withWorker(timeline.record({ nextQueuedRun: async () => null }), async (taskQueue) => {
      const queue = await startQueue(taskQueue, serverId());
      const idleSince = await timeline.untilCalled('nextQueuedRun', 1);
      await queue.result();
      const endedAt = await temporal.now();
      expect(endedAt - idleSince).toBeGreaterThanOrEqual(10 * MINUTE);
      expect(endedAt - idleSince).toBeLessThan(11 * MINUTE);
      expect(timeline.times('nextQueuedRun')).toHaveLength(1);
    });
  });

  test('a wake within the 10 minutes keeps it going: it reads the queue again and waits 10 minutes from then', async () => {
    const timeline = new Timeline();
    await temporal.withWorker(timeline.record({ nextQueuedRun: async () => null }), async (taskQueue) => {
      const queue = await startQueue(taskQueue, serverId());
      const idleSince = await timeline.untilCalled('nextQueuedRun', 1);
      await temporal.env.sleep(9 * MINUTE);
      expect(await statusOf(queue)).toBe('RUNNING');
      await wake(queue);
      const wokenAt = await timeline.untilCalled('nextQueuedRun', 2);
      expect(wokenAt - idleSince).toBeGreaterThanOrEqual(9 * MINUTE);
      await queue.result();
      const endedAt = await temporal.now();
      expect(endedAt - wokenAt).toBeGreaterThanOrEqual(10 * MINUTE);
      expect(endedAt - wokenAt).toBeLessThan(11 * MINUTE);
      expect(timeline.times('nextQueuedRun')).toHaveLength(2);
    });
  });
});

describe('a fleet target holding its turn', () => {
  test('its run is checked every minute; once the run has ended without the turn given back (its workflow terminated), the queue moves on', async () => {
    const server = serverId();
    const target = queuedRun(server);
    target.fleetTargetWorkflowId = fleetTargetWorkflowId(target.runId, server);
    // The run as the database has it at each check: running, until the worker's reconcile closes it (the workflow is gone).
    const checks = scripted([running, running, running, closedByReconcile]);
    const timeline = new Timeline();
    const queueMocks = timeline.record({ nextQueuedRun: once(target), endedRun: checks });
    await temporal.withWorker({}, async (standInQueue) => {
      const holder = await temporal.env.client.workflow.start(turnKeepingTarget, { taskQueue: standInQueue, workflowId: target.fleetTargetWorkflowId! });
      await temporal.withWorker(queueMocks, async (taskQueue) => {
        const queue = await startQueue(taskQueue, server);
        const turnGivenAt = await timeline.untilCalled('nextQueuedRun', 1);
        await eventually(() => holder.query(hasTurnQuery), (has) => has);
        await holder.terminate('terminated by hand, holding its turn');
        await queue.result();
        const checkedAt = timeline.times('endedRun');
        expect(checkedAt).toHaveLength(4);
        expect(gaps([turnGivenAt, ...checkedAt]).every(aboutAMinute)).toBe(true);
        // The fourth check found the run ended: the queue read the next run at once, found none, idled 10 minutes.
        const [, movedOnAt] = timeline.times('nextQueuedRun');
        expect(movedOnAt! - checkedAt[3]!).toBeLessThan(MINUTE);
      });
    }, STAND_INS);
  });
});

describe('a long-lived queue', () => {
  const oneStep = [{ name: 'restart', command: 'x', timeout_seconds: null, retries: 0, continue_on_error: false }];

  test('once Temporal suggests it (its history past 4 MB), it continues as new when the run it started has ended', async () => {
    const server = serverId();
    const run = queuedRun(server);
    let queued: QueuedRun | null = null;
    const timeline = new Timeline();
    const mocks = timeline.record({
      nextQueuedRun: async () => [queued, (queued = null)][0],
      beginRun: async () => oneStep,
      startStep: async (): Promise<StepResult> => ({ status: 'success', exitCode: 0, timedOut: false, endedRun: true }),
      finishRun: async () => undefined,
    });
    await temporal.withWorker(mocks, async (taskQueue) => {
      const queue = await startQueue(taskQueue, server);
      await timeline.untilCalled('nextQueuedRun', 1);
      await padHistoryPast4MB(queue, timeline);
      expect(await statusOf(queue)).toBe('RUNNING');
      const readsBefore = timeline.times('nextQueuedRun').length;
      queued = run;
      await wake(queue);
      const first = temporal.env.client.workflow.getHandle(queue.workflowId, queue.firstExecutionRunId);
      expect(await eventually(() => statusOf(first), (status) => status !== 'RUNNING')).toBe('CONTINUED_AS_NEW');
      expect(await statusOf(temporal.env.client.workflow.getHandle(deploymentRunWorkflowId(run.runId)))).toBe('COMPLETED');
      // The new execution reads the queue afresh (one read: the first went on to its run), then idles out as any queue does.
      const latest = temporal.env.client.workflow.getHandle(queue.workflowId);
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
    await Promise.all(Array.from({ length: 5 }, () => queue.signal<[string]>(WAKE_QUEUE_SIGNAL, padding)));
    await timeline.untilCalled('nextQueuedRun', reads + 1);
  }
}
