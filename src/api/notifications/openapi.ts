import { z } from 'zod';
import { pageOf } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { createChannelSchema, deliveryQuerySchema, notificationSettingsSchema, updateChannelSchema } from './schemas';
import { channelSchema, createdChannelSchema, deliverySchema } from './views';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'Notifications';
const base = '/api/v1/notification-channels';
const id = { id: idParam('notification channel') };
const urlRules = [
  '`url` a valid http or https URL, without credentials in it',
  '`url` resolves only to addresses Bosun may send to: never link-local or cloud metadata (169.254.0.0/16, fe80::/10, fd00:ec2::254); loopback and private ones unless the organization’s notification settings refuse them; a host that does not resolve is refused',
  '`filter.deployments` are the organization’s deployments',
];

export const notificationOperations: Operation[] = [
  {
    method: 'get', path: base, operationId: 'listNotificationChannels', tag, scope: 'admin', everywhere: true,
    summary: 'List the organization’s notification channels',
    description: 'By name. Secrets are never shown; a slack URL’s secret part is masked.',
    responses: { 200: { description: 'Every channel', body: dataOf(z.array(channelSchema)) } },
    errors: [],
  },
  {
    method: 'post', path: base, operationId: 'createNotificationChannel', tag, scope: 'admin', everywhere: true,
    summary: 'Add a notification channel (a signed webhook, or slack)',
    description:
      'Bosun tells the channel of the `events` it subscribes to, narrowed by `filter`: durably (at least once, per subject in order, retried for 24 h), signed per the Standard Webhooks specification. ' +
      'The answer carries the signing `secret` (whsec_…) this once. Names are unique in the organization (409). See docs/notifications.md.',
    body: { schema: createChannelSchema, required: true },
    responses: { 201: { description: 'Added, with its secret', body: dataOf(createdChannelSchema), headers: locationHeader('notification channel') } },
    errors: ['conflict', 'validation_failed'],
    beyondSchema: urlRules,
  },
  {
    method: 'get', path: `${base}/:id`, operationId: 'getNotificationChannel', tag, scope: 'admin', everywhere: true,
    summary: 'Read a notification channel',
    params: id,
    responses: { 200: { description: 'The channel', body: dataOf(channelSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'patch', path: `${base}/:id`, operationId: 'updateNotificationChannel', tag, scope: 'admin', everywhere: true,
    summary: 'Change a notification channel, or enable one a receiver’s 410 disabled',
    params: id,
    body: { schema: updateChannelSchema, required: true },
    responses: { 200: { description: 'The channel as changed', body: dataOf(channelSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'managed_by_source'],
    beyondSchema: urlRules,
  },
  {
    method: 'delete', path: `${base}/:id`, operationId: 'deleteNotificationChannel', tag, scope: 'admin', everywhere: true,
    summary: 'Delete a notification channel',
    description: 'Its deliveries not yet made are dropped (each recorded as `dropped`, with why).',
    params: id,
    query: forceQuerySchema,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'managed_by_source', 'validation_failed'],
  },
  {
    method: 'get', path: `${base}/:id/deliveries`, operationId: 'listNotificationDeliveries', tag, scope: 'admin', everywhere: true,
    summary: 'A channel’s deliveries and their attempts',
    description: 'Newest first: each with its status (pending, delivering, delivered, failed, dead, dropped), attempts (time, response code, first 200 bytes of the answer, error), and the next attempt’s time.',
    params: id,
    query: deliveryQuerySchema,
    responses: { 200: { description: 'One page of deliveries', body: pageOf(deliverySchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'post', path: `${base}/:id/deliveries/:deliveryId/redeliver`, operationId: 'redeliverNotification', tag, scope: 'admin', everywhere: true,
    summary: 'Send a delivery again',
    description: 'Whatever became of it (delivered, dead, dropped…): sent again with the same `webhook-id`, after the subject’s deliveries already waiting.',
    params: { ...id, deliveryId: idParam('delivery') },
    responses: { 202: { description: 'Queued again', body: dataOf(deliverySchema) } },
    errors: ['not_found'],
  },
  {
    method: 'post', path: `${base}/:id/test`, operationId: 'testNotificationChannel', tag, scope: 'admin', everywhere: true,
    summary: 'Send the channel a `ping`',
    description: 'Through the same durable path as every event (its delivery is listed with the others); sent even to a disabled channel.',
    params: id,
    responses: { 202: { description: 'The ping is on its way', body: z.object({ message: z.string() }) } },
    errors: ['not_found'],
  },
  {
    method: 'get', path: '/api/v1/notification-settings', operationId: 'getNotificationSettings', tag, scope: 'admin', everywhere: true,
    summary: 'Read the organization’s notification settings',
    responses: { 200: { description: 'The settings', body: dataOf(notificationSettingsSchema) } },
    errors: [],
  },
  {
    method: 'put', path: '/api/v1/notification-settings', operationId: 'putNotificationSettings', tag, scope: 'admin', everywhere: true,
    summary: 'Set the organization’s notification settings',
    description: 'Checked at every delivery: a channel whose address the settings now refuse fails its deliveries (`failed`, with why).',
    body: { schema: notificationSettingsSchema, required: true },
    responses: { 200: { description: 'The settings as stored', body: dataOf(notificationSettingsSchema) } },
    errors: ['validation_failed'],
  },
];
