import { Types } from 'mongoose';
import { FINAL_DELIVERY_STATUSES, NotificationDeliveryModel } from './model';
import { ATTEMPTS_KEPT, type AttemptRecord } from './deliveries';

/*
 * The deliveries store's dispatcher side: deliveries not yet handed on, the first attempts the
 * dispatcher makes itself (recorded in one bulk write per batch), and the mark of those it hands to
 * their subject's workflow. Each write is safe to repeat.
 */

export interface QueuedDelivery {
  deliveryId: string;
  round: number;
  channelId: string;
  subject: { kind: string; id: string };
  eventId: string;
  createdAt: Date;
  /** Never attempted, in its first round, still pending: the dispatcher may make its first attempt itself. */
  fresh: boolean;
  /** This round's attempts already made (by the dispatcher, before a crash or its hand-over). */
  roundAttempts: number;
}

/** Deliveries not yet handed to their subject's workflow (new ones, redelivered ones), oldest event first. */
export async function unqueuedDeliveries(limit: number): Promise<QueuedDelivery[]> {
  const found = await NotificationDeliveryModel.find({ queued: false }, { round: 1, channel_id: 1, subject: 1, event_id: 1, status: 1, attempt_count: 1, round_attempts: 1, createdAt: 1 })
    .sort({ event_at: 1, _id: 1 })
    .limit(limit)
    .lean();
  return found.map((d) => ({
    deliveryId: d._id.toString(),
    round: d.round,
    channelId: d.channel_id.toString(),
    subject: { kind: d.subject.kind, id: d.subject.id },
    eventId: d.event_id.toString(),
    createdAt: d.createdAt,
    fresh: d.round === 0 && d.attempt_count === 0 && d.status === 'pending',
    roundAttempts: d.round_attempts,
  }));
}

/** `${channel}:${kind}:${id}` of a (channel, subject). */
export const subjectKey = (channelId: string, subject: { kind: string; id: string }) => `${channelId}:${subject.kind}:${subject.id}`;

/** Of these deliveries' (channel, subject)s, those whose workflow still holds an unfinished delivery: theirs must wait behind it. */
export async function subjectsInWorkflows(queued: QueuedDelivery[]): Promise<Set<string>> {
  if (!queued.length) return new Set();
  const open = await NotificationDeliveryModel.find(
    { channel_id: { $in: [...new Set(queued.map((q) => q.channelId))] }, status: { $nin: FINAL_DELIVERY_STATUSES }, queued: true, 'subject.id': { $in: [...new Set(queued.map((q) => q.subject.id))] } },
    { channel_id: 1, subject: 1 },
  ).lean();
  return new Set(open.map((d) => subjectKey(d.channel_id.toString(), d.subject)));
}

/**
 * What the dispatcher's first attempt came to: delivered, ended (failed, dropped, dead after its
 * policy's only attempt: no retry), or to be retried by its subject's workflow at `nextAttemptAt`.
 */
export type FirstAttempt =
  | { of: QueuedDelivery; attempt: AttemptRecord; outcome: 'delivered' }
  | { of: QueuedDelivery; attempt: AttemptRecord | null; outcome: 'failed' | 'dropped' | 'dead'; reason: string }
  | { of: QueuedDelivery; attempt: AttemptRecord; outcome: 'retry'; reason: string; nextAttemptAt: Date };

function firstAttemptWrite(result: FirstAttempt) {
  const { of } = result;
  const ended = result.outcome !== 'retry';
  const $set: Record<string, unknown> =
    result.outcome === 'delivered'
      ? { status: 'delivered', delivered_at: result.attempt.at, next_attempt_at: null, reason: null }
      : { status: result.outcome === 'retry' ? 'delivering' : result.outcome, reason: result.reason, next_attempt_at: result.outcome === 'retry' ? result.nextAttemptAt : null };
  // One that ended needs no workflow: it counts as handed on. One to retry is marked once its workflow has it.
  if (ended) $set.queued = true;
  if (result.attempt) $set.round_attempts = 1;
  const update: Record<string, unknown> = { $set, $currentDate: { updatedAt: true } };
  if (result.attempt) Object.assign(update, { $push: { attempts: { $each: [result.attempt], $slice: -ATTEMPTS_KEPT } }, $inc: { attempt_count: 1 } });
  return { updateOne: { filter: { _id: new Types.ObjectId(of.deliveryId), round: of.round, status: 'pending' }, update } };
}

/** The dispatcher's first attempts of a batch, recorded in one write (one still pending only: a channel deleted meanwhile keeps its drop). */
export async function recordFirstAttempts(results: FirstAttempt[]): Promise<void> {
  if (results.length) await NotificationDeliveryModel.collection.bulkWrite(results.map(firstAttemptWrite), { ordered: false });
}

/** Handed to their workflows (this round of each), in one write. */
export async function markQueued(refs: Array<Pick<QueuedDelivery, 'deliveryId' | 'round'>>): Promise<void> {
  if (refs.length) await NotificationDeliveryModel.bulkWrite(refs.map(({ deliveryId, round }) => ({ updateOne: { filter: { _id: deliveryId, round }, update: { $set: { queued: true } } } })), { ordered: false });
}
