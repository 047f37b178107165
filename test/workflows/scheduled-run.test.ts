import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { FireTickInput, ScheduledRunInput, TickOutcome } from '../../src/domain/contracts/schedules';
import { eventually } from '../support/bosun';
import { useTimeSkippingTemporal } from '../support/time-skipping';

/**
 * A schedule's tick workflow with mocked activities (what they do for real is covered end to end in
 * test/schedules/): it starts its run, lives as long as it, and when cancelled (overlap
 * `cancel_other`) cancels its run; a refused tick ends at once with its reason.
 */

const temporal = useTimeSkippingTemporal();

const tick = (extra: Partial<ScheduledRunInput> = {}): ScheduledRunInput => ({ scheduleId: 'a'.repeat(24), organizationId: 'org', deploymentId: 'dep', requestedAt: '2027-03-28T01:00:00.000Z', ...extra });

function mocks(fired: TickOutcome, runEnds: Promise<string> = Promise.resolve('success')) {
  const calls: Array<{ name: string; input: unknown }> = [];
  const recorded = <I, O>(name: string, body: (input: I) => Promise<O>) => async (input: I) => {
    calls.push({ name, input });
    return body(input);
  };
  return {
    calls,
    activities: {
      fireScheduledRun: recorded('fireScheduledRun', async (_input: FireTickInput) => fired),
      awaitRunEnd: recorded('awaitRunEnd', async () => runEnds),
      cancelScheduledRun: recorded('cancelScheduledRun', async () => undefined),
    },
  };
}

test('a tick that starts its run waits for it, and ends with its status', async () => {
  const { calls, activities } = mocks({ outcome: 'fired', runId: 'r1', message: null }, Promise.resolve('failed'));
  const result = await temporal().withWorker(activities, (taskQueue) =>
    temporal().env.client.workflow.execute('scheduledRunWorkflow', { taskQueue, workflowId: `tick-${randomBytes(4).toString('hex')}`, args: [tick()] }),
  );
  expect(result).toEqual({ outcome: 'fired', runId: 'r1', message: null, runStatus: 'failed' });
  expect(calls.map((c) => c.name)).toEqual(['fireScheduledRun', 'awaitRunEnd']);
  expect(calls[0]!.input).toEqual({ scheduleId: 'a'.repeat(24), scheduledAt: '2027-03-28T01:00:00.000Z', requestedBy: null });
});

test('a refused tick (frozen) ends at once with its reason, waiting for nothing', async () => {
  const { calls, activities } = mocks({ outcome: 'frozen', runId: null, message: 'Change freeze black-friday covers web-1' });
  const result = await temporal().withWorker(activities, (taskQueue) =>
    temporal().env.client.workflow.execute('scheduledRunWorkflow', { taskQueue, workflowId: `tick-${randomBytes(4).toString('hex')}`, args: [tick()] }),
  );
  expect(result).toMatchObject({ outcome: 'frozen', runId: null, runStatus: null });
  expect(calls.map((c) => c.name)).toEqual(['fireScheduledRun']);
});

test('a tick cancelled while its run goes on (overlap cancel_other) cancels its run', async () => {
  let never!: (status: string) => void;
  const { calls, activities } = mocks({ outcome: 'fired', runId: 'r2', message: null }, new Promise<string>((resolve) => (never = resolve)));
  await temporal().withWorker(activities, async (taskQueue) => {
    const handle = await temporal().env.client.workflow.start('scheduledRunWorkflow', { taskQueue, workflowId: `tick-${randomBytes(4).toString('hex')}`, args: [tick()] });
    await eventually(async () => calls.map((c) => c.name), (names) => names.includes('awaitRunEnd'), 30_000);
    await handle.cancel();
    const ended = await handle.result().then(
      () => null,
      (error: unknown) => error,
    );
    expect(ended).toBeInstanceOf(WorkflowFailedError);
    never('cancelled');
  });
  expect(calls.find((c) => c.name === 'cancelScheduledRun')?.input).toEqual({ runId: 'r2', reason: expect.stringContaining('cancel_other') });
});
