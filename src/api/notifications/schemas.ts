import { z } from 'zod';
import { CHANNEL_TYPES, DELIVERY_STATUSES, EVENT_TYPES } from '../../domain/notifications/model';
import { objectIdSchema } from '../http/ids';
import { pageQuerySchema } from '../http/pagination';
import { requiredText } from '../http/text';
import { forceField } from '../ownership/guard';

const urlSchema = z
  .string()
  .max(2000)
  .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s]+$/, 'url must be an http or https URL')
  .describe('Where Bosun POSTs: an http(s) URL (for slack, the incoming-webhook URL). Never a link-local or cloud metadata address; loopback and private ones unless the organization’s notification settings refuse them.');

const eventsSchema = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .transform((events) => [...new Set(events)])
  .describe('The events the channel is sent');

const tagSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'a tag: lowercase letters, digits, ".", "_" and "-"');

export const channelFilterSchema = z
  .strictObject({
    deployments: z.array(objectIdSchema).max(100).nullable().optional().describe('Only these deployments’ events (events of no deployment, such as a server’s, pass)'),
    tags: z.array(tagSchema).max(50).nullable().optional().describe('Only events about servers with one of these tags (events of no server pass)'),
    only_final_failure: z.boolean().optional().describe('run.failed only for a run’s final failure: a fleet run that rolled back by itself sends run.rolled_back and not also run.failed (see docs/notifications.md)'),
  })
  .describe('What narrows the events sent');

const nameSchema = requiredText('name', 64);

export const createChannelSchema = z.strictObject({
  name: nameSchema,
  type: z.enum(CHANNEL_TYPES).describe('webhook: a Standard Webhooks JSON POST, signed; slack: a Block Kit message to an incoming webhook'),
  url: urlSchema,
  events: eventsSchema,
  filter: channelFilterSchema.optional(),
});
export type CreateChannelInput = z.infer<typeof createChannelSchema>;

export const updateChannelSchema = z
  .strictObject({
    name: nameSchema.optional(),
    url: urlSchema.optional(),
    events: eventsSchema.optional(),
    filter: channelFilterSchema.optional(),
    enabled: z.boolean().optional().describe('true: a channel disabled (by a receiver’s 410, or by hand) sends again; false: disables it'),
    force: forceField,
  })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'send at least one of name, url, events, filter, enabled')
  .meta({ minProperties: 1 });
export type UpdateChannelInput = z.infer<typeof updateChannelSchema>;

export const deliveryQuerySchema = pageQuerySchema.extend({
  status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this status'),
});

export const notificationSettingsSchema = z.strictObject({
  refuse_private_addresses: z.boolean().describe('true: channels may not send to loopback or private addresses (10/8, 172.16/12, 192.168/16, 127/8, 100.64/10, ::1, fc00::/7)'),
});
