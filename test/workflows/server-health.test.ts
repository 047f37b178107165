import { randomBytes } from 'node:crypto';
import type { ServerHealthInput, ServerHealthSweepInput } from '../../src/domain/contracts/servers';
import { serverHealthSweepWorkflowId, serverHealthWorkflowId, SERVERS_TO_WATCH_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/eventually';
import { names, outcome, workflowEnv, type WorkflowEnv } from '../support/workflow-env';

/*
 * An organization's health sweep on a mocked sweep activity: it continues as new after 20 sweeps, so
 * its history (what a worker replays when its workflow cache evicted it) stays a few hundred events;
 * it ends when the organization has nothing left to watch, unless a server was verified meanwhile
 * (its signal). A per-server health workflow of before the sweeps ends at its next check.
 */

let w: WorkflowEnv;
beforeAll(async () => {
  w = await workflowEnv();
});
afterAll(() => w?.teardown());

const intervalSeconds = 0.02;
const sweep = (checked: number) => ({ checked, verified: checked, offline: 0, intervalSeconds });

test('a health sweep continues as new after 20 sweeps, its history a few hundred events', async () => {
  const organizationId = randomBytes(12).toString('hex');
  const first = await w.withWorker({ checkServersHealth: async () => sweep(3) }, async (taskQueue) => {
    const input: ServerHealthSweepInput = { organizationId, intervalSeconds };
    const handle = await w.env.client.workflow.start('serverHealthSweepWorkflow', { taskQueue, workflowId: serverHealthSweepWorkflowId(organizationId), args: [input] });
    const events = await eventually(
      async () => (await w.env.client.workflow.getHandle(serverHealthSweepWorkflowId(organizationId), handle.firstExecutionRunId).fetchHistory()).events ?? [],
      (e) => Boolean(e.at(-1)?.workflowExecutionContinuedAsNewEventAttributes),
      60_000,
    );
    await handle.terminate('test over');
    return events;
  });
  expect(first.filter((e) => e.activityTaskScheduledEventAttributes).length).toBe(20);
  expect(first.length).toBeLessThan(300);
}, 120_000);

test('a sweep that finds nothing to watch ends, unless a server was verified while it looked', async () => {
  const organizationId = randomBytes(12).toString('hex');
  const workflowId = serverHealthSweepWorkflowId(organizationId);
  let sweeps = 0;
  const { status, calls } = await w.withWorker(
    {
      // The first sweep finds nothing, but a server is verified (its signal) while it looks: the sweep goes on. The next finds nothing: it ends.
      checkServersHealth: async () => {
        sweeps += 1;
        if (sweeps === 1) await w.env.client.workflow.getHandle(workflowId).signal(SERVERS_TO_WATCH_SIGNAL);
        return sweep(0);
      },
    },
    async (taskQueue, recorded) => {
      const handle = await w.env.client.workflow.start('serverHealthSweepWorkflow', { taskQueue, workflowId, args: [{ organizationId, intervalSeconds }] });
      return { status: await outcome(handle), calls: recorded };
    },
  );
  expect(status).toBe('COMPLETED');
  expect(names(calls)).toEqual(['checkServersHealth', 'checkServersHealth']);
});

test("a server's own health workflow, started before the sweeps, ends at its next check without checking", async () => {
  const serverId = randomBytes(12).toString('hex');
  const { status, calls } = await w.withWorker({ checkServerHealth: async () => ({ outcome: 'verified', intervalSeconds }) }, async (taskQueue, recorded) => {
    const input: ServerHealthInput = { serverId, organizationId: 'org', intervalSeconds };
    const handle = await w.env.client.workflow.start('serverHealthWorkflow', { taskQueue, workflowId: serverHealthWorkflowId(serverId), args: [input] });
    return { status: await outcome(handle), calls: recorded };
  });
  expect(status).toBe('COMPLETED');
  expect(names(calls)).toEqual([]);
});
