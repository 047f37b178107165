import { Types, type ClientSession } from 'mongoose';
import { asObjectId } from '../ids';
import { NotificationEventModel, type EventType, type SubjectKind } from './model';

export { EVENT_TYPES, type EventType } from './model';

/*
 * The notification outbox: each event a channel can be told of is written by the store transition that makes the
 * change, in the same MongoDB transaction (`inTransaction`, src/domain/database.ts), or — for a transition that is repeated
 * until it is known to have happened (a retried activity) — under a `key` that makes the repeat a
 * no-op. The dispatch workflow (workflows/notification-dispatch.ts) drains it.
 */

type Id = string | Types.ObjectId;

export interface NewEvent {
  organizationId: Id;
  type: EventType;
  subject: { kind: SubjectKind; id: Id };
  deploymentId?: Id | null;
  serverIds?: Id[];
  tags?: string[];
  /** A fleet run's failure whose automatic rollback already reported (only_final_failure skips it). */
  superseded?: boolean;
  /** Only this channel (a test ping). */
  channelId?: Id | null;
  /** Already redacted: never a secret, never a parameter's secret value. */
  payload: Record<string, unknown>;
  at?: Date;
  /** Recorded once, however often the transition recording it is repeated. */
  key?: string;
}

/** Records an event, in `session`'s transaction when given; one with a `key` already recorded is left as it is. */
export async function recordNotificationEvent(event: NewEvent, { session }: { session?: ClientSession } = {}): Promise<void> {
  const at = event.at ?? new Date();
  const document = {
    organization_id: asObjectId(event.organizationId),
    type: event.type,
    subject: { kind: event.subject.kind, id: String(event.subject.id) },
    deployment_id: event.deploymentId ? asObjectId(event.deploymentId) : null,
    server_ids: (event.serverIds ?? []).map(asObjectId),
    tags: event.tags ?? [],
    superseded: event.superseded ?? false,
    channel_id: event.channelId ? asObjectId(event.channelId) : null,
    payload: { type: event.type, at: at.toISOString(), ...event.payload },
    at,
    dispatched_at: null,
  };
  if (!event.key) {
    await NotificationEventModel.collection.insertOne({ _id: new Types.ObjectId(), ...document }, { session });
    return;
  }
  // An upsert, not an insert: a duplicate key would abort the transaction it is part of.
  await NotificationEventModel.collection.updateOne({ key: event.key }, { $setOnInsert: { ...document, key: event.key } }, { upsert: true, session });
}

/**
 * The audit trail's head published (issue 26, audit half): an `audit.checkpoint` event with the
 * head's `seq` and `hash`, recorded once per (organization, seq). Called by the audit trail's
 * checkpoint job; pass `session` to record it in that job's transaction.
 */
export async function recordAuditCheckpoint(organizationId: Id, head: { seq: number; hash: string; at: Date }, options: { session?: ClientSession } = {}): Promise<void> {
  await recordNotificationEvent(
    {
      organizationId,
      type: 'audit.checkpoint',
      subject: { kind: 'audit', id: String(organizationId) },
      payload: { audit: { seq: head.seq, hash: head.hash, at: head.at.toISOString() } },
      at: head.at,
      key: `audit.checkpoint:${String(organizationId)}:${head.seq}`,
    },
    options,
  );
}
