import { randomBytes } from 'node:crypto';
import type { ServerHealthInput } from '../../src/domain/contracts/servers';
import { serverHealthWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/eventually';
import { workflowEnv, type WorkflowEnv } from '../support/workflow-env';

/*
 * A server's health workflow on a mocked check: it continues as new after 30 checks, so its history
 * (what a worker replays when its bounded workflow cache evicted it between two checks) stays a few
 * hundred events; histories recorded before held 200 checks (test/histories/server-health.json replays them).
 */

let w: WorkflowEnv;
beforeAll(async () => {
  w = await workflowEnv();
});
afterAll(() => w?.teardown());

test('a health workflow continues as new after 30 checks, its history a few hundred events', async () => {
  const serverId = randomBytes(12).toString('hex');
  const intervalSeconds = 0.02;
  const mocks = { checkServerHealth: async () => ({ outcome: 'verified', intervalSeconds }) };
  const first = await w.withWorker(mocks, async (taskQueue) => {
    const input: ServerHealthInput = { serverId, organizationId: 'org', intervalSeconds };
    const handle = await w.env.client.workflow.start('serverHealthWorkflow', { taskQueue, workflowId: serverHealthWorkflowId(serverId), args: [input] });
    const firstRunId = handle.firstExecutionRunId;
    // The first execution ends by continuing as new (its last event), the next one runs on.
    const events = await eventually(
      async () => (await w.env.client.workflow.getHandle(serverHealthWorkflowId(serverId), firstRunId).fetchHistory()).events ?? [],
      (e) => Boolean(e.at(-1)?.workflowExecutionContinuedAsNewEventAttributes),
      60_000,
    );
    await handle.terminate('test over');
    return events;
  });
  expect(first.filter((e) => e.activityTaskScheduledEventAttributes).length).toBe(30);
  expect(first.length).toBeLessThan(400);
}, 120_000);
