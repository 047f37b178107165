import type http from 'node:http';
import type { Types } from 'mongoose';
import { allowedAddresses } from '../src/domain/notifications/addresses';
import { channelSecret, channelUrl } from '../src/domain/notifications/channels';
import type { NotificationChannel, NotificationEvent } from '../src/domain/notifications/model';
import { post, signedHeaders, slackMessage, type Answer } from '../src/domain/notifications/send';
import { notificationSettings, type NotificationSettings } from '../src/domain/notifications/settings';
import { OrganizationModel } from '../src/domain/organizations/model';
import type { SecretBox } from '../src/domain/secrets/secret-box';

/*
 * One POST of a delivery, for the subject's workflow (everything read at its attempt) and for the
 * dispatcher's first attempts (what a batch shares read once per batch).
 */

type Id = string | Types.ObjectId;

/** What an attempt reads besides its delivery: the organization's rule and slug, the channel's URL and secret. */
export interface DeliveryLookups {
  settings(organizationId: Id): Promise<NotificationSettings>;
  slug(organizationId: Id): Promise<string | null>;
  url(channel: NotificationChannel): Promise<string>;
  secret(channel: NotificationChannel): string;
}

const organizationSlug = async (id: Id) => (await OrganizationModel.findById(id, { slug: 1 }).lean())?.slug ?? null;

/** Everything read at the attempt. */
export const attemptLookups = (secretBox: SecretBox): DeliveryLookups => ({
  settings: notificationSettings,
  slug: organizationSlug,
  url: (channel) => channelUrl(channel, secretBox),
  secret: (channel) => channelSecret(channel, secretBox),
});

/** Read once per batch (a batch lasts a second or so: a changed setting applies from the next one). */
export function batchLookups(secretBox: SecretBox): DeliveryLookups {
  const once = <T>(read: (key: string) => T) => {
    const kept = new Map<string, T>();
    return (key: string) => (kept.has(key) ? kept.get(key)! : kept.set(key, read(key)).get(key)!);
  };
  const settings = once((id) => notificationSettings(id));
  const slug = once((id) => organizationSlug(id));
  const urls = new Map<string, Promise<string>>();
  const secrets = new Map<string, string>();
  return {
    settings: (id) => settings(String(id)),
    slug: (id) => slug(String(id)),
    url: (channel) => {
      const key = channel._id.toString();
      if (!urls.has(key)) urls.set(key, channelUrl(channel, secretBox));
      return urls.get(key)!;
    },
    secret: (channel) => {
      const key = channel._id.toString();
      if (!secrets.has(key)) secrets.set(key, channelSecret(channel, secretBox));
      return secrets.get(key)!;
    },
  };
}

export interface Posting {
  deliveryId: string;
  channel: NotificationChannel;
  event: NotificationEvent;
  at: Date;
}

/**
 * The event posted to its channel's receiver (an allowed address only, checked now), signed with the
 * channel's secret under the delivery's webhook-id: the receiver's answer. Throws AddressRefused.
 * `agentFor`: a kept-alive connection pool for the checked address (none: a connection of its own).
 */
export async function postDelivery(
  { lookups, consoleUrl, agentFor }: { lookups: DeliveryLookups; consoleUrl?: () => string | undefined; agentFor?: (address: string) => http.Agent },
  { deliveryId, channel, event, at }: Posting,
): Promise<Answer> {
  const { refuse_private_addresses } = await lookups.settings(channel.organization_id);
  const url = await lookups.url(channel);
  const [address] = await allowedAddresses(url, refuse_private_addresses);
  const payload = event.payload as Record<string, unknown>;
  const base = consoleUrl?.();
  const console_url = typeof payload.console_path === 'string' && base ? `${base}${payload.console_path}` : null;
  const { console_path: _path, ...fields } = payload;
  const message = { id: event._id.toString(), ...fields, type: event.type, at: event.at.toISOString(), organization: { id: event.organization_id.toString(), slug: await lookups.slug(event.organization_id) }, console_url };
  const body = JSON.stringify(channel.type === 'slack' ? slackMessage(message) : message);
  const headers = signedHeaders(lookups.secret(channel), `msg_${deliveryId}`, body, at);
  return post({ url, address: address!, body, headers, agent: agentFor?.(`${new URL(url).protocol}${address!.address}`) });
}
