import type { Types } from 'mongoose';
import { FINAL_DELIVERY_STATUSES, NotificationChannelModel, NotificationDeliveryModel, NotificationEventModel, type NotificationChannel, type NotificationEvent } from './model';
import { inTransaction } from '../database';

/*
 * The deliveries store: one delivery per event and matching channel (unique), created by the
 * dispatcher with the event marked dispatched; its attempts, and its end. Each write is safe to repeat.
 */

/** Kept per delivery: the latest attempts. */
export const ATTEMPTS_KEPT = 50;

/** Whether a channel is to be told of an event: its type subscribed, and the event within the channel's filter. */
export function channelWants(channel: Pick<NotificationChannel, '_id' | 'events' | 'filter' | 'disabled_at'>, event: Pick<NotificationEvent, 'type' | 'deployment_id' | 'tags' | 'superseded' | 'channel_id'>): boolean {
  if (event.type === 'ping') return event.channel_id?.equals(channel._id) ?? false;
  if (channel.disabled_at) return false;
  if (!channel.events.includes(event.type)) return false;
  const filter = channel.filter ?? { deployments: null, tags: null, only_final_failure: false };
  // Filters narrow what they are about: an event of no deployment (a server's) passes a deployments filter.
  if (filter.deployments?.length && event.deployment_id && !filter.deployments.some((d) => d.equals(event.deployment_id!))) return false;
  if (filter.tags?.length && event.tags.length && !event.tags.some((t) => filter.tags!.includes(t))) return false;
  if (filter.only_final_failure && event.type === 'run.failed' && event.superseded) return false;
  return true;
}

/** Events not yet dispatched, oldest first. */
export const undispatchedEvents = (limit: number) =>
  NotificationEventModel.find({ dispatched_at: null }).sort({ at: 1, _id: 1 }).limit(limit).lean<NotificationEvent[]>();

/** A new delivery of `event` to `channel`, made once (an upsert on the unique channel and event). */
function newDelivery(event: NotificationEvent, channel: NotificationChannel, maxAttempts: number, now: Date) {
  return {
    updateOne: {
      filter: { channel_id: channel._id, event_id: event._id },
      update: {
        $setOnInsert: {
          organization_id: event.organization_id,
          channel_id: channel._id,
          event_id: event._id,
          event_type: event.type,
          event_at: event.at,
          subject: event.subject,
          status: 'pending',
          round: 0,
          queued: false,
          attempts: [],
          attempt_count: 0,
          round_attempts: 0,
          max_attempts: maxAttempts,
          next_attempt_at: null,
          reason: null,
          delivered_at: null,
          createdAt: now,
          updatedAt: now,
        },
      },
      upsert: true,
    },
  };
}

/**
 * A batch of events' deliveries (one per event and matching channel, made once) and their marks as
 * dispatched, in one transaction, the channels read once for the batch; `maxAttempts`: the retry
 * policy's maximum the dispatcher's workflows are started with. Returns the deliveries made.
 */
export async function dispatchEvents(events: NotificationEvent[], maxAttempts: number): Promise<number> {
  if (!events.length) return 0;
  const organizations = [...new Set(events.filter((e) => !e.channel_id).map((e) => e.organization_id.toString()))];
  const pinged = events.flatMap((e) => (e.channel_id ? [e.channel_id] : []));
  const channels = await NotificationChannelModel.find(
    { $or: [{ organization_id: { $in: organizations }, disabled_at: null }, { _id: { $in: pinged } }] },
    { organization_id: 1, events: 1, filter: 1, disabled_at: 1 },
  ).lean<NotificationChannel[]>();
  const now = new Date();
  const made = events.flatMap((event) =>
    channels.filter((channel) => channel.organization_id.equals(event.organization_id) && channelWants(channel, event)).map((channel) => newDelivery(event, channel, maxAttempts, now)),
  );
  await inTransaction(async (session) => {
    // The driver's own write: mongoose's typing of a $setOnInsert with sub-documents is in the way.
    if (made.length) await NotificationDeliveryModel.collection.bulkWrite(made, { session });
    await NotificationEventModel.updateMany({ _id: { $in: events.map((e) => e._id) } }, { $set: { dispatched_at: now } }, { session });
  });
  return made.length;
}

/** A delivery with its event and channel, for an attempt; null when the delivery is gone. */
export async function deliveryToSend(deliveryId: string) {
  const delivery = await NotificationDeliveryModel.findById(deliveryId).lean();
  if (!delivery) return null;
  const [event, channel] = await Promise.all([NotificationEventModel.findById(delivery.event_id).lean<NotificationEvent>(), NotificationChannelModel.findById(delivery.channel_id).lean<NotificationChannel>()]);
  return { delivery, event, channel };
}

/**
 * An attempt begins: delivering, out of `maxAttempts` (its workflow's retry policy). False when the
 * delivery has ended (or was redelivered since): nothing to send.
 */
export async function beginAttempt(deliveryId: string, round: number, maxAttempts: number): Promise<boolean> {
  const begun = await NotificationDeliveryModel.updateOne({ _id: deliveryId, round, status: { $nin: FINAL_DELIVERY_STATUSES } }, { $set: { status: 'delivering', max_attempts: maxAttempts } });
  return begun.matchedCount > 0;
}

export interface AttemptRecord {
  at: Date;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
}

/** Attempt number `number` of its round, and its result; a failed one says when the next one is due. */
export async function recordAttempt(
  { deliveryId, round, number }: { deliveryId: string; round: number; number: number },
  attempt: AttemptRecord,
  outcome: { delivered: true } | { delivered: false; nextAttemptAt: Date | null },
): Promise<void> {
  const $set: Record<string, unknown> = outcome.delivered
    ? { status: 'delivered', delivered_at: attempt.at, next_attempt_at: null, reason: null, round_attempts: number }
    : { next_attempt_at: outcome.nextAttemptAt, reason: attempt.error ?? `the receiver answered ${attempt.response_code}`, round_attempts: number };
  await NotificationDeliveryModel.updateOne(
    { _id: deliveryId, round, status: { $nin: FINAL_DELIVERY_STATUSES } },
    { $set, $push: { attempts: { $each: [attempt], $slice: -ATTEMPTS_KEPT } }, $inc: { attempt_count: 1 } },
  );
}

/** The end of a delivery that was not made: failed (refused for good), dead (retries spent), dropped (its channel went). */
export async function endDelivery(deliveryId: string, round: number, status: 'failed' | 'dead' | 'dropped', reason: string): Promise<void> {
  await NotificationDeliveryModel.updateOne({ _id: deliveryId, round, status: { $nin: FINAL_DELIVERY_STATUSES } }, { $set: { status, reason, next_attempt_at: null } });
}

/** POST …/redeliver: sent again (a new round, the same webhook-id), whatever became of it. Null when there is none. */
export async function redeliver(channelId: Types.ObjectId, deliveryId: Types.ObjectId) {
  return NotificationDeliveryModel.findOneAndUpdate(
    { _id: deliveryId, channel_id: channelId },
    { $set: { status: 'pending', queued: false, round_attempts: 0, next_attempt_at: null, reason: null, delivered_at: null }, $inc: { round: 1 } },
    { returnDocument: 'after' },
  ).lean();
}
