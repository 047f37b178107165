import { Context } from '@temporalio/activity';
import type { WorkflowSignatures } from '../src/domain/contracts/signatures';
import { DEFAULT_NOTIFICATION_RETRY_SECONDS, GIVE_UP_AFTER_SECONDS, maxNotificationAttempts, retryDelaySeconds, type DeliveryRef, type SendOutcome } from '../src/domain/contracts/notifications';
import { DELIVER_SIGNAL, notificationDeliveryWorkflowId } from '../src/domain/contracts/workflow-ids';
import { AddressRefused, allowedAddresses } from '../src/domain/notifications/addresses';
import { channelSecret, channelUrl, disableChannel } from '../src/domain/notifications/channels';
import * as deliveries from '../src/domain/notifications/deliveries';
import { NotificationDeliveryModel } from '../src/domain/notifications/model';
import { post, RESPONSE_EXCERPT_BYTES, signedHeaders, slackMessage, type Answer } from '../src/domain/notifications/send';
import { notificationSettings } from '../src/domain/notifications/settings';
import { OrganizationModel } from '../src/domain/organizations/model';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import type { Logger } from '../src/logger';
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
const BATCH = 200;
/** Events dispatched, and subjects' deliveries queued, at a time. */
const PARALLEL = 16;

/** `work` on every item, at most PARALLEL at a time. */
async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

type ToSend = NonNullable<Awaited<ReturnType<typeof deliveries.deliveryToSend>>>;
type Attempt = Parameters<typeof deliveries.recordAttempt>[1];
/** A delivery's attempt: which delivery, which round, which attempt of the round. */
type AttemptOf = Parameters<typeof deliveries.recordAttempt>[0];

async function organizationSlug(id: unknown) {
  return (await OrganizationModel.findById(id, { slug: 1 }).lean())?.slug ?? null;
}

/**
 * The event posted to its channel's receiver (an allowed address only), signed with the channel's
 * secret under the delivery's webhook-id: the receiver's answer. Throws AddressRefused.
 */
async function postDelivery(
  { secretBox, consoleUrl }: Pick<NotificationActivityDeps, 'secretBox' | 'consoleUrl'>,
  { deliveryId, channel, event, at }: { deliveryId: string; channel: NonNullable<ToSend['channel']>; event: NonNullable<ToSend['event']>; at: Date },
): Promise<Answer> {
  const { refuse_private_addresses } = await notificationSettings(channel.organization_id);
  const url = await channelUrl(channel, secretBox);
  const [address] = await allowedAddresses(url, refuse_private_addresses);
  const payload = event.payload as Record<string, unknown>;
  const base = consoleUrl?.();
  const console_url = typeof payload.console_path === 'string' && base ? `${base}${payload.console_path}` : null;
  const { console_path: _path, ...fields } = payload;
  const message = { id: event._id.toString(), ...fields, type: event.type, at: event.at.toISOString(), organization: { id: event.organization_id.toString(), slug: await organizationSlug(event.organization_id) }, console_url };
  const body = JSON.stringify(channel.type === 'slack' ? slackMessage(message) : message);
  const headers = signedHeaders(channelSecret(channel, secretBox), `msg_${deliveryId}`, body, at);
  return post({ url, address: address!, body, headers });
}

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

/**
 * Every undispatched event given its deliveries (PARALLEL at a time: each makes its own, in its own
 * transaction), then every delivery not yet queued handed to its subject's workflow: subjects in
 * parallel, each subject's deliveries one after another, oldest event first (their order there is
 * the order they are sent in). An event's deliveries all exist before any of the batch is queued.
 */
async function drainOnce(context: Context, { retryInitialMs, maxAttempts }: { retryInitialMs: number | undefined; maxAttempts: number }): Promise<number> {
  let handled = 0;
  for (;;) {
    const events = await deliveries.undispatchedEvents(BATCH);
    await inParallel(events, async (event) => {
      await deliveries.dispatchEvent(event, maxAttempts);
      context.heartbeat();
    });
    handled += events.length;
    if (events.length < BATCH) break;
  }
  for (;;) {
    const queued = await deliveries.unqueuedDeliveries(BATCH);
    const bySubject = new Map<string, typeof queued>();
    for (const ref of queued) {
      const workflowId = notificationDeliveryWorkflowId(ref.channelId, ref.subject);
      bySubject.set(workflowId, [...(bySubject.get(workflowId) ?? []), ref]);
    }
    await inParallel([...bySubject], async ([workflowId, refs]) => {
      for (const ref of refs) {
        await context.client.workflow.signalWithStart<WorkflowSignatures['notificationDeliveryWorkflow'], [DeliveryRef]>('notificationDeliveryWorkflow', {
          workflowId,
          taskQueue: context.info.taskQueue,
          args: [{ channelId: ref.channelId, subject: ref.subject, maxAttempts, ...(retryInitialMs ? { retryInitialMs } : {}) }],
          signal: DELIVER_SIGNAL,
          signalArgs: [{ deliveryId: ref.deliveryId, round: ref.round }],
          staticSummary: `Notifications of ${ref.subject.kind} ${ref.subject.id} to channel ${ref.channelId}, in order`,
        });
        await deliveries.markQueued(ref.deliveryId, ref.round);
        context.heartbeat();
      }
    });
    handled += queued.length;
    if (queued.length < BATCH) break;
  }
  return handled;
}

export function createNotificationActivities({ secretBox, log, consoleUrl, notificationMetrics, workerStopping, notificationRetrySeconds, notificationMaxAttempts }: NotificationActivityDeps) {
  const retryInitialMs = notificationRetrySeconds === undefined ? undefined : notificationRetrySeconds * 1000;
  const policy = { retryInitialMs, maxAttempts: maxNotificationAttempts(notificationRetrySeconds, notificationMaxAttempts) };
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
        const found = await drainOnce(context, policy);
        handled += found;
        context.heartbeat();
        if (found) continue;
        await untilStopping(workerStopping, context.sleep(Math.min(POLL_MS, Math.max(0, until - Date.now()))).catch(() => undefined));
      }
      return handled;
    },

    /**
     * One attempt at a delivery. 2xx: delivered. A refused address: failed, for good. 410: the
     * channel disabled, the delivery dropped. A channel deleted or disabled meanwhile: dropped.
     * Anything else (another status, no answer within 10 s, no connection): thrown, and retried by
     * the workflow's policy with the same webhook-id.
     */
    /** `retryInitialMs`, `maxAttempts`: its workflow's retry policy (the activity's info does not carry it); absent, 5 s and the 24 h's. */
    async sendNotification({ deliveryId, round, retryInitialMs: initialMs = DEFAULT_NOTIFICATION_RETRY_SECONDS * 1000, maxAttempts = maxNotificationAttempts(initialMs / 1000) }: DeliveryRef & { retryInitialMs?: number; maxAttempts?: number }): Promise<SendOutcome> {
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
      const of = { deliveryId, round, number: context.info.attempt };
      const nextAttemptAt = nextAttemptAfter(delivery.createdAt, context.info.attempt, { initialSeconds: initialMs / 1000, maxAttempts });
      let answer: Answer | undefined;
      try {
        answer = await postDelivery({ secretBox, consoleUrl }, { deliveryId, channel, event, at });
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
