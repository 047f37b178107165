import { getEventListeners, getMaxListeners, setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityClientCall } from '../../activities/client-calls';
import { sharedServices } from '../support/shared';

/*
 * A long activity's Temporal client calls (the notification drain signals a subject's workflow for
 * each delivery it hands over, for minutes on end), against the tests' Temporal dev server: each call
 * the SDK makes inside an activity leaves a listener on the activity's cancellation signal; made through
 * activityClientCall, none stays, and a call is still cancelled with its activity.
 */

const CALLS = 25;

let connection: Connection;
let client: Client;
beforeAll(async () => {
  connection = await Connection.connect({ address: sharedServices().temporalAddress });
  client = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
});

/** The abort listeners on the activity's signal after `CALLS` calls made by `call`. */
async function listenersAfterCalls(call: (context: Context) => Promise<unknown>): Promise<number> {
  const env = new MockActivityEnvironment({}, { client });
  return env.run(async () => {
    const context = Context.current();
    // The SDK's own listeners pile up here on purpose (the first test shows it): no warning in the suite's log for them.
    setMaxListeners(CALLS + 1, context.cancellationSignal);
    for (let i = 0; i < CALLS; i += 1) await call(context);
    return getEventListeners(context.cancellationSignal, 'abort').length;
  });
}

const systemInfo = (context: Context) => context.client.workflowService.getSystemInfo({});

test('the SDK leaves a listener per client call on the activity’s signal; activityClientCall leaves none', async () => {
  // What the SDK does by itself (if a version of it stops doing so, activityClientCall can go).
  expect(await listenersAfterCalls(systemInfo)).toBeGreaterThanOrEqual(CALLS);
  expect(await listenersAfterCalls((context) => activityClientCall(context, () => systemInfo(context)))).toBe(0);
});

test('a call through activityClientCall is cancelled with its activity', async () => {
  // A workflow no worker polls for: waiting for its result is a long poll only a cancel ends sooner.
  const workflowId = `client-calls-${Date.now()}`;
  await client.workflow.start('nobodyRunsThis', { taskQueue: `${workflowId}-nobody-polls`, workflowId });
  try {
    const env = new MockActivityEnvironment({}, { client });
    const outcome = env.run(async () => {
      const context = Context.current();
      return activityClientCall(context, () => context.client.workflow.getHandle(workflowId).result()).then(
        () => 'answered',
        (error: Error) => `${error.message}: ${(error.cause as Error | undefined)?.message}`,
      );
    });
    setTimeout(() => env.cancel(), 200);
    // The SDK's own words for a gRPC call cancelled on the client's side.
    expect(await outcome).toMatch(/CANCELLED/);
  } finally {
    await client.workflow.getHandle(workflowId).terminate('test over');
  }
});

test('calls at once through activityClientCall (the drain hands subjects over 16 at a time) are not taken for a listener leak', async () => {
  const env = new MockActivityEnvironment({}, { client });
  const held: { most: number; after: number; allowed: number } = await env.run(async () => {
    const context = Context.current();
    let most = 0;
    await Promise.all(
      Array.from({ length: 16 }, () =>
        activityClientCall(context, async () => {
          most = Math.max(most, getEventListeners(context.cancellationSignal, 'abort').length);
          return systemInfo(context);
        }),
      ),
    );
    return { most, after: getEventListeners(context.cancellationSignal, 'abort').length, allowed: getMaxListeners(context.cancellationSignal) };
  });
  // Sixteen listeners at once, each gone with its call: no leak. Node warns of "a possible EventTarget
  // memory leak" when a signal holds more than it allows (10 unless raised): the log must not say so.
  expect([held.most, held.after]).toEqual([16, 0]);
  expect(held.most).toBeLessThanOrEqual(held.allowed);
});
