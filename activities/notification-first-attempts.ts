import http from 'node:http';
import https from 'node:https';
import type { Context } from '@temporalio/activity';
import { Types } from 'mongoose';
import { GIVE_UP_AFTER_SECONDS, retryDelaySeconds } from '../src/domain/contracts/notifications';
import { inLanes } from '../src/domain/lanes';
import { AddressRefused } from '../src/domain/notifications/addresses';
import { disableChannel } from '../src/domain/notifications/channels';
import type { AttemptRecord } from '../src/domain/notifications/deliveries';
import { subjectKey, subjectsInWorkflows, type FirstAttempt, type QueuedDelivery } from '../src/domain/notifications/delivery-queue';
import { NotificationChannelModel, NotificationEventModel, type NotificationChannel, type NotificationEvent } from '../src/domain/notifications/model';
import { RESPONSE_EXCERPT_BYTES } from '../src/domain/notifications/send';
import { batchLookups, postDelivery } from './notification-post';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import type { Logger } from '../src/logger';

/*
 * The dispatcher's fast path: a new delivery whose (channel, subject) has nothing earlier still
 * being sent is attempted by the drain itself — subjects in parallel (at most LANES POSTs at once,
 * over kept-alive connections), one subject's deliveries one after another, oldest event first —
 * and the batch's results recorded in one write. Only what must be retried (and whatever of its
 * subject comes after it) is handed to the subject's workflow, which retries in order as before.
 */

/** POSTs in flight at once, across subjects. */
const LANES = 64;

export interface Policy {
  retryInitialMs: number | undefined;
  maxAttempts: number;
  initialSeconds: number;
}

/** A delivery for its subject's workflow, with the attempts of this round already made. */
export type HandOver = QueuedDelivery & { attemptsMade: number };

/** What the dispatcher's first attempts need of the notification activities' dependencies (notifications.ts says what each is). */
export interface FirstAttemptDeps {
  secretBox: SecretBox;
  log: Logger;
  consoleUrl?: () => string | undefined;
  notificationMetrics?: { count(channel: string, outcome: string): void; delivered(seconds: number): void };
}

/** A pool of kept-alive connections per checked address, for one pass of the drain (batches back to back). */
export function connectionPools() {
  const pools = new Map<string, http.Agent>();
  return {
    agentFor: (key: string) => {
      if (!pools.has(key)) pools.set(key, key.startsWith('https:') ? new https.Agent({ keepAlive: true, maxSockets: LANES }) : new http.Agent({ keepAlive: true, maxSockets: LANES }));
      return pools.get(key)!;
    },
    close: () => pools.forEach((pool) => pool.destroy()),
  };
}

/** Attempt 1 failed with `reason`: retried by the workflow after the policy's first wait, or dead when the policy (or the day) allows no more. */
function refusedAttempt(of: QueuedDelivery, attempt: AttemptRecord, reason: string, { maxAttempts, initialSeconds }: Policy): FirstAttempt {
  const delay = retryDelaySeconds(1, initialSeconds);
  const elapsed = (Date.now() - of.createdAt.getTime()) / 1000;
  if (maxAttempts > 1 && elapsed + delay < GIVE_UP_AFTER_SECONDS) return { of, attempt, outcome: 'retry', reason, nextAttemptAt: new Date(Date.now() + delay * 1000) };
  return { of, attempt, outcome: 'dead', reason: `not delivered in ${maxAttempts} attempts: ${reason}` };
}

/**
 * The batch's fresh deliveries whose subject waits for nothing, attempted once each; returns what
 * each came to (unrecorded) and what is handed to the subjects' workflows, in each subject's order.
 */
export type ConnectionPools = ReturnType<typeof connectionPools>;

export async function firstAttempts(
  context: Context,
  deps: FirstAttemptDeps,
  queued: QueuedDelivery[],
  policy: Policy,
  pools: ConnectionPools,
): Promise<{ results: FirstAttempt[]; handOver: HandOver[]; disable: () => Promise<void> }> {
  const [inWorkflows, events, channels] = await Promise.all([
    subjectsInWorkflows(queued.filter((q) => q.fresh)),
    NotificationEventModel.find({ _id: { $in: queued.filter((q) => q.fresh).map((q) => q.eventId) } }).lean<NotificationEvent[]>(),
    NotificationChannelModel.find({ _id: { $in: [...new Set(queued.map((q) => q.channelId))] } }).lean<NotificationChannel[]>(),
  ]);
  const eventById = new Map(events.map((e) => [e._id.toString(), e]));
  const channelById = new Map(channels.map((c) => [c._id.toString(), c]));
  const lookups = batchLookups(deps.secretBox);
  // Channels whose receiver answered 410: disabled once the batch's results are recorded (goneChannels), so its deliveries already answered show delivered.
  const gone = new Map<string, { reason: string; except: string }>();
  const results: FirstAttempt[] = [];
  const handOver: HandOver[] = [];
  const count = (channel: string, outcome: string) => deps.notificationMetrics?.count(channel, outcome);

  const attempt = async (of: QueuedDelivery): Promise<FirstAttempt> => {
    const channel = channelById.get(of.channelId);
    const event = eventById.get(of.eventId);
    const disabled = channel && (channel.disabled_at || gone.has(of.channelId)) && event?.type !== 'ping';
    const unsendable = !channel ? 'the channel was deleted' : !event ? 'its event is gone' : disabled ? `the channel is disabled: ${channel.disabled_reason ?? 'its receiver answered 410 Gone'}` : null;
    if (unsendable !== null || !channel || !event) return { of, attempt: null, outcome: 'dropped', reason: unsendable ?? '' };
    const at = new Date();
    const started = Date.now();
    try {
      const answer = await postDelivery({ lookups, consoleUrl: deps.consoleUrl, agentFor: pools.agentFor }, { deliveryId: of.deliveryId, channel, event, at });
      const record = { at, response_code: answer.status, response_body: answer.body.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'), error: null, duration_ms: Date.now() - started };
      if (answer.status >= 200 && answer.status < 300) {
        deps.notificationMetrics?.delivered((Date.now() - event.at.getTime()) / 1000);
        return { of, attempt: record, outcome: 'delivered' };
      }
      if (answer.status === 410) {
        if (!gone.has(of.channelId)) gone.set(of.channelId, { reason: `the receiver answered 410 Gone at ${at.toISOString()}`, except: of.deliveryId });
        return { of, attempt: record, outcome: 'dropped', reason: 'the receiver answered 410 Gone: the channel is disabled' };
      }
      return refusedAttempt(of, record, `the receiver answered ${answer.status}`, policy);
    } catch (error) {
      const refused = error instanceof AddressRefused;
      const reason = refused ? error.message : `no answer: ${(error as Error).message}`;
      const record = { at, response_code: null, response_body: null, error: reason, duration_ms: Date.now() - started };
      if (refused) deps.log.warn({ channel: of.channelId, delivery: of.deliveryId, reason }, 'notification refused: its address is not allowed');
      return refused ? { of, attempt: record, outcome: 'failed', reason } : refusedAttempt(of, record, reason, policy);
    }
  };

  const subjects = new Map<string, QueuedDelivery[]>();
  for (const of of queued) {
    const key = subjectKey(of.channelId, of.subject);
    subjects.set(key, [...(subjects.get(key) ?? []), of]);
  }
  const beat = setInterval(() => context.heartbeat(), 1_000);
  try {
    await inLanes([...subjects], LANES, async ([key, refs]) => {
      // Behind a delivery still in its workflow (or one handed there now), a subject's deliveries all go there, in order.
      let waiting = inWorkflows.has(key);
      for (const of of refs) {
        if (waiting || !of.fresh) {
          waiting = true;
          handOver.push({ ...of, attemptsMade: of.roundAttempts });
          continue;
        }
        const result = await attempt(of);
        results.push(result);
        count(of.channelId, result.outcome === 'retry' ? 'failed_attempt' : result.outcome);
        if (result.outcome !== 'retry') continue;
        waiting = true;
        handOver.push({ ...of, attemptsMade: 1 });
      }
    });
  } finally {
    clearInterval(beat);
  }
  const disable = async () => {
    for (const [channelId, { reason, except }] of gone) {
      await disableChannel(new Types.ObjectId(channelId), reason, new Types.ObjectId(except));
      deps.log.warn({ channel: channelId }, 'notification channel disabled: its receiver answered 410 Gone');
    }
  };
  return { results, handOver, disable };
}
