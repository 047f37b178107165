import { auditChainWorkflowId, auditCheckpointWorkflowId, notificationDispatchWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser } from '../support/client';
import { periodically } from '../../src/worker/periodic';
import { Client, Connection } from '@temporalio/client';
import { sharedServices } from '../support/shared';

const singletonIds = (taskQueue: string) => [notificationDispatchWorkflowId(taskQueue), auditChainWorkflowId(taskQueue), auditCheckpointWorkflowId(taskQueue)];

describe('the workflows a Bosun runs once: the notification dispatcher, the audit trail’s chainer and checkpoint clock', () => {
  // One Bosun at a time in a process (one MongoDB connection): each test stops its own, this the one a failure left.
  let bosun: Bosun | undefined;
  afterAll(() => bosun?.stop());

  test('one terminated by hand in Temporal is started again by the worker, and the trail is chained again', async () => {
    const started = await startBosun({ singletonsEveryMs: 500 });
    bosun = started;
    const ops = await asUser(started, 'singletons');
    const before = new Map<string, string>();
    for (const workflowId of singletonIds(started.taskQueue)) {
      const handle = started.temporal.workflow.getHandle(workflowId);
      const described = await handle.describe();
      expect(described.status.name).toBe('RUNNING');
      before.set(workflowId, described.runId);
      await handle.terminate('an operator pressed the button');
    }

    const runs = () => Promise.all(singletonIds(started.taskQueue).map(async (workflowId) => ({ workflowId, ...(await describe(workflowId)) })));
    const describe = async (workflowId: string) => {
      const described = await started.temporal.workflow.getHandle(workflowId).describe();
      return { status: described.status.name, runId: described.runId };
    };
    await eventually(runs, (all) => all.every(({ workflowId, status, runId }) => status === 'RUNNING' && runId !== before.get(workflowId)), 60_000);

    // A change made now reaches the trail: the new chainer chains it.
    const serverId = await ops.addServer();
    const created = async () => ((await started.api.get('/api/v1/audit?action=server.create').set(bearer(ops.token)).expect(200)).body.data as Array<{ target: { id: string } }>).map((entry) => entry.target.id);
    await eventually(created, (ids) => ids.includes(serverId), 60_000);
    bosun = undefined;
    await started.stop();
  }, 120_000);

  test('a stopping worker hands its long activities (the notification drain, the chainer) back at once, for another worker to take up', async () => {
    const started = await startBosun();
    bosun = started;
    // The test's own client: the Bosun's closes with it.
    const connection = await Connection.connect({ address: sharedServices().temporalAddress });
    const temporal = new Client({ connection });
    const longActivities = [notificationDispatchWorkflowId(started.taskQueue), auditChainWorkflowId(started.taskQueue)];
    const pending = (workflowId: string) => temporal.workflow.getHandle(workflowId).describe().then((d) => d.raw.pendingActivities?.[0]);
    // Both running on this worker.
    for (const workflowId of longActivities) await eventually(() => pending(workflowId), (activity) => activity?.state === 2 /* STARTED */, 60_000);
    bosun = undefined;
    await started.stop();
    // Each came back at once as this worker's WorkerShutdown (retried by another worker), not cancelled after the shutdown's grace time.
    for (const workflowId of longActivities) {
      const activity = await eventually(() => pending(workflowId), (a) => !!a?.lastFailure, 30_000);
      expect([workflowId, activity!.lastFailure!.applicationFailureInfo?.type]).toEqual([workflowId, 'WorkerShutdown']);
      await temporal.workflow.getHandle(workflowId).terminate('the test is over');
    }
    await connection.close();
  }, 120_000);
});

describe('a worker\'s periodic task (the singletons\' start, the queue and schedule sweeps)', () => {
  test('its stop waits for the round in flight, and no round starts after it', async () => {
    const rounds: Array<() => void> = [];
    const stop = periodically(1, () => new Promise<void>((resolve) => rounds.push(resolve)), () => undefined);
    expect(rounds).toHaveLength(1);
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    // The round still runs (a Temporal call, say): Bosun must not close its connections yet.
    expect(stopped).toBe(false);
    rounds[0]!();
    await stopping;
    expect(stopped).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rounds).toHaveLength(1);
  });

  test('a round that throws is reported and the next one still comes', async () => {
    const failures: unknown[] = [];
    let calls = 0;
    let second: () => void = () => undefined;
    const secondCame = new Promise<void>((resolve) => (second = resolve));
    const stop = periodically(
      1,
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('Temporal away');
        second();
      },
      (err) => failures.push(err),
    );
    await secondCame;
    await stop();
    expect((failures[0] as Error).message).toBe('Temporal away');
  });
});
