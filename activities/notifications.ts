import { Context } from '@temporalio/activity';
import { DEFAULT_NOTIFICATION_RETRY_SECONDS, GIVE_UP_AFTER_SECONDS, maxNotificationAttempts, retryDelaySeconds, type DeliveryRef, type SendOutcome } from '../src/domain/contracts/notifications';
import { AddressRefused } from '../src/domain/notifications/addresses';
import { disableChannel } from '../src/domain/notifications/channels';
import * as deliveries from '../src/domain/notifications/deliveries';
import { NotificationDeliveryModel } from '../src/domain/notifications/model';
import { RESPONSE_EXCERPT_BYTES, type Answer } from '../src/domain/notifications/send';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import type { Logger } from '../src/logger';
import { drainOnce } from './notification-drain';
import { attemptLookups, postDelivery } from './notification-post';
import { throwIfStopping, untilStopping } from './worker-stopping';

export interface NotificationActivityDeps {
  secretBox: SecretBox;
  log: Logger;
  /** The console's address for links (PUBLIC_URL, or the API's own); undefined: no links. */
  consoleUrl?: () => string | undefined;
  /** bosun_notifications_total and the delivery latency. */
  notificationMetrics?: { count(channel: string, outcome: string): void; delivered(seconds: number): void };
  /** Aborted when this worker begins to stop: the drain hands its work back at once rather than holding the shutdown for its grace time. */
  workerStopping?: AbortSignal;
  /** NOTIFICATION_RETRY_SECONDS: the wait before a refused delivery's retry, given to each subject's workflow it starts (5 s unless given). */
  notificationRetrySeconds?: number;
  /** NOTIFICATION_MAX_ATTEMPTS: fewer attempts than the 24 h allow before a delivery is dead (unset: the 24 h's). */
  notificationMaxAttempts?: number;
}

/** How often the dispatcher looks for new events and deliveries to queue: a notification leaves within about this. */
const POLL_MS = 1_000;

type ToSend = NonNullable<Awaited<ReturnType<typeof deliveries.deliveryToSend>>>;
type Attempt = Parameters<typeof deliveries.recordAttempt>[1];
/** A delivery's attempt: which delivery, which round, which attempt of the round. */
type AttemptOf = Parameters<typeof deliveries.recordAttempt>[0];

/** When to try a delivery again after attempt `attempt` failed; null after the policy's last attempt, or once its day (GIVE_UP_AFTER_SECONDS) would be over. */
function nextAttemptAfter(createdAt: Date, attempt: number, { initialSeconds, maxAttempts }: { initialSeconds: number; maxAttempts: number }): () => Date | null {
  const elapsed = (Date.now() - createdAt.getTime()) / 1000;
  const delay = retryDelaySeconds(attempt, initialSeconds);
  return () => (attempt < maxAttempts && elapsed + delay < GIVE_UP_AFTER_SECONDS ? new Date(Date.now() + delay * 1000) : null);
}

/** No answer to record: an address refused (the delivery failed, for good), or none came (an attempt to retry). */
async function recordNoAnswer(
  of: AttemptOf,
  error: unknown,
  { at, duration_ms }: Pick<Attempt, 'at' | 'duration_ms'>,
  nextAttemptAt: () => Date | null,
): Promise<{ refused: boolean; reason: string }> {
  const refused = error instanceof AddressRefused;
  const reason = refused ? error.message : `no answer: ${(error as Error).message}`;
  await deliveries.recordAttempt(of, { at, response_code: null, response_body: null, error: reason, duration_ms }, { delivered: false, nextAttemptAt: refused ? null : nextAttemptAt() });
  if (refused) await deliveries.endDelivery(of.deliveryId, of.round, 'failed', reason);
  return { refused, reason };
}

/**
 * The receiver's answer recorded: 2xx delivered; 410 the channel disabled and the delivery dropped;
 * anything else an attempt to retry (at `nextAttemptAt`, unless its day is over).
 */
async function recordAnswer(
  { of, delivery, channel }: { of: AttemptOf; delivery: ToSend['delivery']; channel: NonNullable<ToSend['channel']> },
  status: number,
  attempt: Attempt,
  nextAttemptAt: () => Date | null,
): Promise<'delivered' | 'dropped' | 'retry'> {
  if (status >= 200 && status < 300) {
    await deliveries.recordAttempt(of, attempt, { delivered: true });
    return 'delivered';
  }
  if (status === 410) {
    await deliveries.recordAttempt(of, attempt, { delivered: false, nextAttemptAt: null });
    await disableChannel(channel._id, `the receiver answered 410 Gone at ${attempt.at.toISOString()}`, delivery._id);
    await deliveries.endDelivery(of.deliveryId, of.round, 'dropped', 'the receiver answered 410 Gone: the channel is disabled');
    return 'dropped';
  }
  await deliveries.recordAttempt(of, attempt, { delivered: false, nextAttemptAt: nextAttemptAt() });
  return 'retry';
}

/** A receiver's answer that is not a success: retried (the activity's retry policy). */
class ReceiverRefused extends Error {
  override name = 'NotificationNotDelivered';
}

export function createNotificationActivities({ secretBox, log, consoleUrl, notificationMetrics, workerStopping, notificationRetrySeconds, notificationMaxAttempts }: NotificationActivityDeps) {
  const retryInitialMs = notificationRetrySeconds === undefined ? undefined : notificationRetrySeconds * 1000;
  const policy = { retryInitialMs, maxAttempts: maxNotificationAttempts(notificationRetrySeconds, notificationMaxAttempts), initialSeconds: notificationRetrySeconds ?? DEFAULT_NOTIFICATION_RETRY_SECONDS };
  const count = (channel: string, outcome: string) => notificationMetrics?.count(channel, outcome);

  return {
    /**
     * The dispatcher's drain, for `drainMs`: a look for undispatched events and unqueued deliveries
     * every POLL_MS (at once again after a look that found some). Polling, not change streams: a
     * change stream is woken by every write to the database (each step's result, log and audit
     * entry), which cost every deployment step more than these two indexed finds a second cost
     * everything. Heartbeats; cancellable.
     */
    async drainNotifications({ drainMs }: { drainMs: number }): Promise<number> {
      const context = Context.current();
      const until = Date.now() + drainMs;
      let handled = 0;
      while (Date.now() < until && !context.cancellationSignal.aborted) {
        throwIfStopping(workerStopping, 'drains the notification outbox');
        const found = await drainOnce(context, { secretBox, consoleUrl, notificationMetrics, log }, policy);
        handled += found;
        context.heartbeat();
        if (found) continue;
        await untilStopping(workerStopping, context.sleep(Math.min(POLL_MS, Math.max(0, until - Date.now()))).catch(() => undefined));
      }
      return handled;
    },

    /**
     * One attempt at a delivery (after `attemptsMade` the dispatcher made itself). 2xx: delivered. A refused address: failed, for good. 410: the
     * channel disabled, the delivery dropped. A channel deleted or disabled meanwhile: dropped.
     * Anything else (another status, no answer within 10 s, no connection): thrown, and retried by
     * the workflow's policy with the same webhook-id.
     */
    /** `retryInitialMs`, `maxAttempts`: its workflow's retry policy (the activity's info does not carry it); absent, 5 s and the 24 h's. */
    async sendNotification({ deliveryId, round, attemptsMade = 0, retryInitialMs: initialMs = DEFAULT_NOTIFICATION_RETRY_SECONDS * 1000, maxAttempts = maxNotificationAttempts(initialMs / 1000) }: DeliveryRef & { retryInitialMs?: number; maxAttempts?: number }): Promise<SendOutcome> {
      const context = Context.current();
      const found = await deliveries.deliveryToSend(deliveryId);
      if (!found || found.delivery.round !== round) return 'skipped';
      const { delivery, event, channel } = found;
      const channelId = delivery.channel_id.toString();
      // Nowhere to send it (the channel deleted or disabled), or nothing (its event gone): dropped.
      const unsendable = !channel ? 'the channel was deleted' : !event ? 'its event is gone' : channel.disabled_at && event.type !== 'ping' ? `the channel is disabled: ${channel.disabled_reason ?? ''}` : null;
      if (unsendable !== null || !channel || !event) {
        await deliveries.endDelivery(deliveryId, round, 'dropped', unsendable ?? '');
        count(channelId, 'dropped');
        return 'dropped';
      }
      if (!(await deliveries.beginAttempt(deliveryId, round, maxAttempts))) return 'skipped';

      const at = new Date();
      const started = Date.now();
      const number = attemptsMade + context.info.attempt;
      const of = { deliveryId, round, number };
      const nextAttemptAt = nextAttemptAfter(delivery.createdAt, number, { initialSeconds: initialMs / 1000, maxAttempts });
      let answer: Answer | undefined;
      try {
        answer = await postDelivery({ lookups: attemptLookups(secretBox), consoleUrl }, { deliveryId, channel, event, at });
      } catch (error) {
        const { refused, reason } = await recordNoAnswer(of, error, { at, duration_ms: Date.now() - started }, nextAttemptAt);
        count(channelId, refused ? 'failed' : 'failed_attempt');
        if (!refused) throw new ReceiverRefused(reason);
        log.warn({ channel: channelId, delivery: deliveryId, reason }, 'notification refused: its address is not allowed');
        return 'failed';
      }
      const attempt = { at, response_code: answer.status, response_body: answer.body.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'), error: null, duration_ms: Date.now() - started };
      const outcome = await recordAnswer({ of, delivery, channel }, answer.status, attempt, nextAttemptAt);
      if (outcome === 'delivered') notificationMetrics?.delivered((Date.now() - event.at.getTime()) / 1000);
      if (outcome === 'dropped') log.warn({ channel: channelId }, 'notification channel disabled: its receiver answered 410 Gone');
      count(channelId, outcome === 'retry' ? 'failed_attempt' : outcome);
      if (outcome === 'retry') throw new ReceiverRefused(`the receiver answered ${answer.status}`);
      return outcome;
    },

    /** A delivery whose retries were spent (its policy's maximum attempts, or 24 h): dead. */
    async giveUpDelivery({ deliveryId, round, reason }: DeliveryRef & { reason: string }): Promise<void> {
      const found = await NotificationDeliveryModel.findById(deliveryId, { channel_id: 1 }).lean();
      await deliveries.endDelivery(deliveryId, round, 'dead', reason);
      if (found) count(found.channel_id.toString(), 'dead');
    },
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
