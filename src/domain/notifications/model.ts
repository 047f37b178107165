import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { managedByField } from '../managed-by';

/*
 * Notifications: the outbox of events (written with the change each records), the channels an
 * organization sends them to, and one delivery per event and channel. The outbox store (outbox.ts)
 * owns events; the channels store (channels.ts) owns channels and deliveries.
 */

export { EVENT_TYPES, type EventType } from './event-types';

export const SUBJECT_KINDS = ['run', 'pipeline_run', 'conversation', 'server', 'schedule', 'channel', 'audit', 'config_source'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

const notificationEventSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, required: true },
    type: { type: String, required: true },
    subject: { type: new Schema({ kind: { type: String, enum: SUBJECT_KINDS, required: true }, id: { type: String, required: true } }, { _id: false }), required: true },
    // What channels' filters read: the deployment and the servers (and their tags) the event is about.
    deployment_id: { type: Schema.Types.ObjectId, default: null },
    server_ids: { type: [Schema.Types.ObjectId], default: [] },
    tags: { type: [String], default: [] },
    // A fleet run that rolled back by itself: its run.rolled_back is its final word (only_final_failure).
    superseded: { type: Boolean, default: false },
    // Only this channel (a test ping).
    channel_id: { type: Schema.Types.ObjectId, default: null },
    // Redacted at the source: never a secret, never a parameter's secret value.
    payload: { type: Schema.Types.Mixed, required: true },
    at: { type: Date, required: true },
    // Set once a delivery exists for every channel it matched.
    dispatched_at: { type: Date, default: null },
    // An event that must be recorded once however often its transition is repeated (a retried activity).
    key: { type: String, default: undefined },
  },
  { versionKey: false, minimize: false },
);
notificationEventSchema.index({ dispatched_at: 1, at: 1, _id: 1 }, { partialFilterExpression: { dispatched_at: null } });
notificationEventSchema.index({ key: 1 }, { unique: true, partialFilterExpression: { key: { $type: 'string' } } });

export const NotificationEventModel = model('NotificationEvent', notificationEventSchema, 'notification_events');
export type NotificationEvent = InferSchemaType<typeof notificationEventSchema> & { _id: Types.ObjectId };

export const CHANNEL_TYPES = ['webhook', 'slack'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

const notificationChannelSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    type: { type: String, enum: CHANNEL_TYPES, required: true },
    /** The URL as shown (a Slack webhook's token masked); what is sent to is `url_sealed`. */
    url: { type: String, required: true },
    /**
     * The URL sent to, sealed with the master key: a Slack incoming-webhook URL is a credential
     * (whoever has it posts to the channel), and a webhook's may carry a token. Absent on channels
     * created before it was sealed: their `url` is the one sent to.
     */
    url_sealed: { type: String, default: null },
    events: { type: [String], required: true },
    filter: {
      type: new Schema(
        {
          deployments: { type: [Schema.Types.ObjectId], default: null },
          tags: { type: [String], default: null },
          only_final_failure: { type: Boolean, default: false },
        },
        { _id: false },
      ),
      default: () => ({}),
    },
    // The webhook secret (whsec_…), sealed with the master key; shown once, at creation.
    secret_sealed: { type: String, required: true },
    disabled_at: { type: Date, default: null },
    disabled_reason: { type: String, default: null },
    created_by: { type: Schema.Types.Mixed, default: null },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true, minimize: false },
);
notificationChannelSchema.index({ organization_id: 1, name: 1 }, { unique: true });

export const NotificationChannelModel = model('NotificationChannel', notificationChannelSchema, 'notification_channels');
export type NotificationChannel = InferSchemaType<typeof notificationChannelSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };

/**
 * pending: waiting for its turn (events of one subject go out in order);
 * delivering: being sent, or failed and retrying at `next_attempt_at`;
 * delivered: a receiver answered 2xx; failed: refused for good (a forbidden address);
 * dead: still failing after 24 h; dropped: its channel was disabled (410) or deleted first.
 */
export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed', 'dead', 'dropped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const FINAL_DELIVERY_STATUSES: DeliveryStatus[] = ['delivered', 'failed', 'dead', 'dropped'];

const attemptSchema = new Schema(
  {
    at: { type: Date, required: true },
    response_code: { type: Number, default: null },
    response_body: { type: String, default: null },
    error: { type: String, default: null },
    duration_ms: { type: Number, required: true },
  },
  { _id: false },
);

const notificationDeliverySchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, required: true },
    channel_id: { type: Schema.Types.ObjectId, required: true },
    event_id: { type: Schema.Types.ObjectId, required: true },
    event_type: { type: String, required: true },
    event_at: { type: Date, required: true },
    subject: { type: new Schema({ kind: { type: String, required: true }, id: { type: String, required: true } }, { _id: false }), required: true },
    status: { type: String, enum: DELIVERY_STATUSES, required: true, default: 'pending' },
    // Bumped by a redeliver: the delivery is sent again, with the same webhook-id.
    round: { type: Number, required: true, default: 0 },
    // Handed to its subject's delivery workflow (for this round).
    queued: { type: Boolean, required: true, default: false },
    attempts: { type: [attemptSchema], default: [] },
    attempt_count: { type: Number, required: true, default: 0 },
    // This round's attempts (a redeliver starts again at 0), out of the retry policy's maximum (null: before this was recorded).
    round_attempts: { type: Number, required: true, default: 0 },
    max_attempts: { type: Number, default: null },
    next_attempt_at: { type: Date, default: null },
    reason: { type: String, default: null },
    delivered_at: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
notificationDeliverySchema.index({ channel_id: 1, event_id: 1 }, { unique: true });
// A channel's deliveries newest event first (events are dispatched in parallel: creation order is not theirs).
notificationDeliverySchema.index({ channel_id: 1, event_at: -1, _id: -1 });
// A channel's unfinished deliveries (why a pending one waits), and its deliveries of one status.
notificationDeliverySchema.index({ channel_id: 1, status: 1, event_at: 1 });
notificationDeliverySchema.index({ queued: 1, event_at: 1, _id: 1 }, { partialFilterExpression: { queued: false } });

export const NotificationDeliveryModel = model('NotificationDelivery', notificationDeliverySchema, 'notification_deliveries');
export type NotificationDelivery = InferSchemaType<typeof notificationDeliverySchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
