import { ActivityFailure, allHandlersFinished, condition, continueAsNew, defineSignal, proxyActivities, setCurrentDetails, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications';
import { DEFAULT_NOTIFICATION_RETRY_SECONDS, maxNotificationAttempts, retryDelaySeconds, type DeliveryRef, type NotificationDeliveryInput } from '../src/domain/contracts/notifications';
import { DELIVER_SIGNAL } from '../src/domain/contracts/workflow-ids';

const deliverSignal = defineSignal<[DeliveryRef]>(DELIVER_SIGNAL);

/**
 * Each attempt: 10 s for the receiver (the request's own timeout), retried after the workflow's
 * first wait (NOTIFICATION_RETRY_SECONDS, 5 s by default), doubling to 1 h, for 24 h: at most
 * `maxAttempts` attempts, as many as start within the 24 h unless NOTIFICATION_MAX_ATTEMPTS says fewer.
 */
const sendingActivities = (retryInitialMs: number, maxAttempts: number) =>
  proxyActivities<NotificationActivities>({
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '24 hours',
    retry: { initialInterval: retryInitialMs, backoffCoefficient: 2, maximumInterval: '1 hour', maximumAttempts: maxAttempts },
  });

const bookkeeping = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** How long the workflow waits for more before it ends (the next event starts it again). */
const IDLE = '1 minute';
/** Deliveries remembered as done, for the de-duplication of a dispatcher's repeated signal. */
const DONE_KEPT = 200;

const keyOf = (ref: DeliveryRef) => `${ref.deliveryId}:${ref.round}`;

/**
 * One channel's notifications about one subject (a run, a conversation, a server…), in the order
 * the dispatcher signalled them: each delivery retried by its activity's policy until it is sent,
 * refused or 24 h have passed (then dead), before the next one goes. Ends when idle; continues as
 * new before its history grows large.
 */
export async function notificationDeliveryWorkflow(input: NotificationDeliveryInput): Promise<void> {
  const retryInitialMs = input.retryInitialMs ?? DEFAULT_NOTIFICATION_RETRY_SECONDS * 1000;
  const maxAttempts = input.maxAttempts ?? maxNotificationAttempts(retryInitialMs / 1000);
  const sending = sendingActivities(retryInitialMs, maxAttempts);
  /** After `made` attempts the dispatcher made itself: the policy's remaining attempts and waits (a proxy, never awaited: its `then` would be an activity). */
  const resumedSending = (made: number) => sendingActivities(retryDelaySeconds(made + 1, retryInitialMs / 1000) * 1000, Math.max(1, maxAttempts - made));
  const queue: DeliveryRef[] = [...(input.pending ?? [])];
  const done = new Set(input.done ?? []);
  setHandler(deliverSignal, (ref) => {
    const key = keyOf(ref);
    if (done.has(key) || queue.some((queued) => keyOf(queued) === key)) return;
    queue.push(ref);
  });
  for (;;) {
    if (!(await condition(() => queue.length > 0, IDLE))) break;
    const ref = queue[0]!;
    setCurrentDetails(`sending delivery ${ref.deliveryId} (${queue.length - 1} more waiting)`);
    try {
      const made = ref.attemptsMade ?? 0;
      // A delivery the dispatcher already tried: its next attempt after the wait its attempts earned.
      if (made) await sleep(retryDelaySeconds(made, retryInitialMs / 1000) * 1000);
      // The activity is told the policy's first wait and maximum: it says when the next attempt is due, and out of how many.
      await (made ? resumedSending(made) : sending).sendNotification({ ...ref, retryInitialMs, maxAttempts });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      const spent = error.retryState === 'MAXIMUM_ATTEMPTS_REACHED' ? `not delivered in ${maxAttempts} attempts` : 'not delivered within 24 h';
      await bookkeeping.giveUpDelivery({ ...ref, reason: `${spent}: ${error.cause?.message ?? error.message}` });
    }
    queue.shift();
    done.add(keyOf(ref));
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof notificationDeliveryWorkflow>({ ...input, pending: queue, done: [...done].slice(-DONE_KEPT) });
    }
  }
  await condition(allHandlersFinished);
}
