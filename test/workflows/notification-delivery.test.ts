import { ApplicationFailure } from '@temporalio/common';
import { maxNotificationAttempts } from '../../src/domain/contracts/notifications';
import { DELIVER_SIGNAL, notificationDeliveryWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { useTimeSkippingTemporal } from '../support/time-skipping';

/**
 * A subject's delivery workflow on Temporal's time-skipping test server, with mocked activities: a
 * receiver that never answers is retried 5 s, 10 s, 20 s… at most an hour apart for 24 hours, then the
 * delivery is dead and the next one of the subject goes; a later signal for a delivery already done is
 * ignored. The real thing, with real receivers, is test/notifications/ and test/durability/notifications.
 */

const HOUR = 3600_000;
const temporal = useTimeSkippingTemporal();

describe('a subject’s notifications, in test time', () => {
  test('24 h of failures: attempts back off from 5 s doubling to 1 h, then the delivery is dead and the next one is sent', async () => {
    const attempts: Array<{ deliveryId: string; at: number }> = [];
    const givenUp: Array<{ deliveryId: string; at: number; reason: string }> = [];
    const mocks = {
      sendNotification: async ({ deliveryId }: { deliveryId: string }) => {
        attempts.push({ deliveryId, at: await temporal().now() });
        if (deliveryId === 'first') throw ApplicationFailure.retryable('the receiver answered 503', 'NotificationNotDelivered');
        return 'delivered';
      },
      giveUpDelivery: async ({ deliveryId, reason }: { deliveryId: string; reason: string }) => {
        givenUp.push({ deliveryId, reason, at: await temporal().now() });
      },
    };
    await temporal().withWorker(mocks, async (taskQueue) => {
      const subject = { kind: 'run', id: 'r1' };
      const signal = (deliveryId: string) =>
        temporal().env.client.workflow.signalWithStart('notificationDeliveryWorkflow', {
          taskQueue,
          workflowId: notificationDeliveryWorkflowId('c1', subject),
          args: [{ channelId: 'c1', subject }],
          signal: DELIVER_SIGNAL,
          signalArgs: [{ deliveryId, round: 0 }],
        });
      const handle = await signal('first');
      await signal('second');
      await signal('first');
      const started = await temporal().now();
      await handle.result();

      const first = attempts.filter((a) => a.deliveryId === 'first');
      const gaps = first.slice(1).map((a, i) => Math.round((a.at - first[i]!.at) / 1000));
      expect(gaps.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
      expect(Math.max(...gaps)).toBe(3600);
      // The policy's maximum, the attempts that start within the 24 h: 33 with 5 s first waits.
      expect(first).toHaveLength(maxNotificationAttempts());
      expect(maxNotificationAttempts()).toBe(33);
      expect(givenUp).toEqual([{ deliveryId: 'first', reason: 'not delivered in 33 attempts: the receiver answered 503', at: expect.any(Number) }]);
      // Temporal gives up at the last attempt whose next retry would start past the 24 h: between 23 and 24 h.
      expect((givenUp[0]!.at - started) / HOUR).toBeGreaterThan(23);
      expect((givenUp[0]!.at - started) / HOUR).toBeLessThanOrEqual(24);
      // In order: the second only after the first was given up; the repeated signal for the first did nothing.
      const second = attempts.filter((a) => a.deliveryId === 'second');
      expect(second).toHaveLength(1);
      expect(second[0]!.at).toBeGreaterThanOrEqual(givenUp[0]!.at);
      expect(attempts.at(-1)!.deliveryId).toBe('second');
    });
  });

  test('the first wait is the one the workflow was started with (NOTIFICATION_RETRY_SECONDS of its worker), doubling from there', async () => {
    const attempts: number[] = [];
    let failures = 5;
    const mocks = {
      sendNotification: async () => {
        attempts.push(await temporal().now());
        if (failures-- > 0) throw ApplicationFailure.retryable('the receiver answered 503', 'NotificationNotDelivered');
        return 'delivered';
      },
      giveUpDelivery: async () => undefined,
    };
    await temporal().withWorker(mocks, async (taskQueue) => {
      const subject = { kind: 'run', id: 'r2' };
      const handle = await temporal().env.client.workflow.signalWithStart('notificationDeliveryWorkflow', {
        taskQueue,
        workflowId: notificationDeliveryWorkflowId('c2', subject),
        args: [{ channelId: 'c2', subject, retryInitialMs: 2_000 }],
        signal: DELIVER_SIGNAL,
        signalArgs: [{ deliveryId: 'only', round: 0 }],
      });
      await handle.result();
      expect(attempts.slice(1).map((at, i) => Math.round((at - attempts[i]!) / 1000))).toEqual([2, 4, 8, 16, 32]);
    });
  });

  test('a delivery the dispatcher already tried once goes on from its second attempt: after the first wait, then doubling; dead after the policy’s maximum in all', async () => {
    const attempts: Array<{ at: number; attemptsMade: number | undefined }> = [];
    const givenUp: string[] = [];
    const mocks = {
      sendNotification: async ({ attemptsMade }: { attemptsMade?: number }) => {
        attempts.push({ at: await temporal().now(), attemptsMade });
        throw ApplicationFailure.retryable('the receiver answered 503', 'NotificationNotDelivered');
      },
      giveUpDelivery: async ({ reason }: { reason: string }) => {
        givenUp.push(reason);
      },
    };
    await temporal().withWorker(mocks, async (taskQueue) => {
      const subject = { kind: 'run', id: 'r3' };
      const handedOver = await temporal().now();
      const handle = await temporal().env.client.workflow.signalWithStart('notificationDeliveryWorkflow', {
        taskQueue,
        workflowId: notificationDeliveryWorkflowId('c3', subject),
        args: [{ channelId: 'c3', subject, retryInitialMs: 2_000, maxAttempts: 5 }],
        signal: DELIVER_SIGNAL,
        signalArgs: [{ deliveryId: 'tried', round: 0, attemptsMade: 1 }],
      });
      await handle.result();
      // Attempt 1 was the dispatcher's: 2 s later the second, then 4, 8, 16 s apart; 5 in all.
      const at = [handedOver, ...attempts.map((a) => a.at)];
      expect(at.slice(1).map((t, i) => Math.round((t - at[i]!) / 1000))).toEqual([2, 4, 8, 16]);
      expect(attempts.every((a) => a.attemptsMade === 1)).toBe(true);
      expect(givenUp).toEqual(['not delivered in 5 attempts: the receiver answered 503']);
    });
  });
});
