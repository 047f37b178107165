import { z } from 'zod';
import { CHANNEL_TYPES, DELIVERY_STATUSES, EVENT_TYPES, type ChannelType, type NotificationChannel, type NotificationDelivery } from '../../domain/notifications/model';
import { shownUrl } from '../../domain/notifications/channels';
import { timestampSchema } from '../http/timestamps';
import { managedByView, managedByViewSchema } from '../ownership/views';

export const channelSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(CHANNEL_TYPES),
    url: z.string().describe('A slack incoming-webhook URL’s secret part is shown as ********'),
    events: z.array(z.enum(EVENT_TYPES)),
    filter: z.object({ deployments: z.array(z.string()).nullable(), tags: z.array(z.string()).nullable(), only_final_failure: z.boolean() }),
    enabled: z.boolean(),
    disabled_at: timestampSchema.nullable(),
    disabled_reason: z.string().nullable().describe('Why it was disabled: a receiver’s 410 Gone, or an administrator'),
    managed_by: managedByViewSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'NotificationChannel' });

export const createdChannelSchema = channelSchema
  .extend({ secret: z.string().describe('The webhook signing secret (whsec_…): shown this once, never again') })
  .meta({ id: 'CreatedNotificationChannel' });

export const deliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string().describe('The webhook-id header of every attempt (msg_<id>): receivers de-duplicate with it'),
    event: z.object({ id: z.string(), type: z.string(), at: timestampSchema, subject: z.object({ kind: z.string(), id: z.string() }) }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(
      z.object({
        at: timestampSchema,
        response_code: z.number().int().nullable(),
        response_body: z.string().nullable().describe('The first 200 bytes of the answer'),
        error: z.string().nullable(),
        duration_ms: z.number().int(),
      }),
    ),
    attempt_count: z.number().int().describe('Attempts over every round'),
    round_attempts: z.number().int().describe('Attempts in the current round (a redeliver begins a new one), out of max_attempts'),
    max_attempts: z
      .number()
      .int()
      .nullable()
      .describe('The retry policy’s maximum: after this many failed attempts in a round (or 24 h) the delivery is dead. Null for deliveries made before it was recorded'),
    next_attempt_at: timestampSchema.nullable().describe('When the next attempt is due, while a failed one is retried; null after the last attempt'),
    pending_reason: z.string().nullable().describe('Why a pending delivery has not been tried yet: queued for its first attempt, waiting for an earlier event of the same subject, the channel disabled…'),
    waiting_for: z.string().nullable().describe('The delivery a pending one waits for: one subject’s events go out in order'),
    reason: z.string().nullable().describe('Why the last attempt failed, or why the delivery ended unsent'),
    delivered_at: timestampSchema.nullable(),
    created_at: timestampSchema,
  })
  .meta({ id: 'NotificationDelivery' });

export const toChannelView = (channel: NotificationChannel): z.infer<typeof channelSchema> => ({
  id: channel._id.toString(),
  name: channel.name,
  type: channel.type as (typeof CHANNEL_TYPES)[number],
  url: shownUrl(channel.type as ChannelType, channel.url),
  events: channel.events as Array<(typeof EVENT_TYPES)[number]>,
  filter: {
    deployments: channel.filter?.deployments?.map(String) ?? null,
    tags: channel.filter?.tags ?? null,
    only_final_failure: channel.filter?.only_final_failure ?? false,
  },
  enabled: !channel.disabled_at,
  disabled_at: channel.disabled_at?.toISOString() ?? null,
  disabled_reason: channel.disabled_reason ?? null,
  managed_by: managedByView(channel.managed_by),
  created_at: channel.createdAt.toISOString(),
  updated_at: channel.updatedAt.toISOString(),
});

export type DeliveryView = z.infer<typeof deliverySchema>;

/** A delivery as stored; a pending one's reason is the service's (withPendingReasons), which looks at its channel's others. */
export const toDeliveryView = (delivery: NotificationDelivery): DeliveryView => ({
  id: delivery._id.toString(),
  webhook_id: `msg_${delivery._id.toString()}`,
  event: { id: delivery.event_id.toString(), type: delivery.event_type, at: delivery.event_at.toISOString(), subject: { kind: delivery.subject.kind, id: delivery.subject.id } },
  status: delivery.status as (typeof DELIVERY_STATUSES)[number],
  attempts: delivery.attempts.map((a) => ({ at: a.at.toISOString(), response_code: a.response_code ?? null, response_body: a.response_body ?? null, error: a.error ?? null, duration_ms: Math.round(a.duration_ms) })),
  attempt_count: delivery.attempt_count,
  round_attempts: delivery.round_attempts ?? 0,
  max_attempts: delivery.max_attempts ?? null,
  next_attempt_at: delivery.next_attempt_at?.toISOString() ?? null,
  pending_reason: null,
  waiting_for: null,
  reason: delivery.reason ?? null,
  delivered_at: delivery.delivered_at?.toISOString() ?? null,
  created_at: delivery.createdAt.toISOString(),
});
