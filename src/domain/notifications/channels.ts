import { randomBytes } from 'node:crypto';
import { Types, type ClientSession } from 'mongoose';
import { OrganizationSecretModel, openSecrets } from '../secrets/model';
import { secretReferenceName } from '../secrets/references';
import type { SecretBox } from '../secrets/secret-box';
import { AddressRefused } from './addresses';
import { FINAL_DELIVERY_STATUSES, NotificationChannelModel, NotificationDeliveryModel, type ChannelType, type NotificationChannel } from './model';
import { inTransaction } from '../database';
import { recordNotificationEvent } from './event-outbox';

/*
 * The channels store: every write to a channel — created, changed, disabled by a receiver's 410,
 * deleted (its deliveries not yet made dropped, in the same transaction).
 */

export interface ChannelFields {
  name: string;
  type: ChannelType;
  url: string;
  events: string[];
  filter: { deployments: Types.ObjectId[] | null; tags: string[] | null; only_final_failure: boolean };
}

/** The associated data binding a channel's sealed secret to it. */
const secretContext = (channelId: Types.ObjectId | string) => `notification-channel:${String(channelId)}`;

/** The associated data binding a channel's sealed URL to it. */
const urlContext = (channelId: Types.ObjectId | string) => `notification-channel-url:${String(channelId)}`;

/** A channel's URL as shown: a Slack incoming webhook's last segment (its token) masked. */
export const shownUrl = (type: ChannelType, url: string) => (type === 'slack' ? url.replace(/[^/]+$/, '********') : url);

/** How a channel's URL is stored: shown (masked where it is a credential) and sealed. */
const storedUrl = (channelId: Types.ObjectId, type: ChannelType, url: string, secretBox: SecretBox) => ({ url: shownUrl(type, url), url_sealed: secretBox.encrypt(url, urlContext(channelId)) });

/**
 * The URL a delivery is sent to, opened (the worker's side only): sealed, or `${secret:NAME}` (a
 * channel kept in Git) read from the organization's secret now. A secret gone refuses the delivery.
 */
export async function channelUrl(channel: Pick<NotificationChannel, '_id' | 'organization_id' | 'url' | 'url_sealed'>, secretBox: SecretBox): Promise<string> {
  if (channel.url_sealed) return secretBox.decrypt(channel.url_sealed, urlContext(channel._id));
  const name = secretReferenceName(channel.url);
  if (name === null) return channel.url;
  const organizationId = channel.organization_id.toString();
  const secret = await OrganizationSecretModel.findOne({ organization_id: channel.organization_id, name }).select('+value').lean();
  if (!secret) throw new AddressRefused(`the channel's url is the secret "${name}", which the organization does not have (PUT /api/v1/secrets/${name})`);
  return openSecrets([secret], organizationId, secretBox)[0]!;
}

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** A new channel's signing secret, sealed: for a channel whose secret is never shown (one kept in Git). */
export const sealedNewSecret = (channelId: Types.ObjectId, secretBox: SecretBox) => secretBox.encrypt(newSecret(), secretContext(channelId));

/** A new channel and its secret (returned here once, stored sealed); rejects with code 11000 for a name in use. */
export async function createChannel(organizationId: Types.ObjectId, fields: ChannelFields, secretBox: SecretBox, createdBy: unknown): Promise<{ channel: NotificationChannel; secret: string }> {
  const _id = new Types.ObjectId();
  const secret = newSecret();
  const created = await NotificationChannelModel.create({
    _id,
    organization_id: organizationId,
    ...fields,
    ...storedUrl(_id, fields.type, fields.url, secretBox),
    secret_sealed: secretBox.encrypt(secret, secretContext(_id)),
    created_by: createdBy,
  });
  return { channel: created.toObject() as NotificationChannel, secret };
}

/** The channel's secret, opened for signing (the worker's side only). */
export const channelSecret = (channel: Pick<NotificationChannel, '_id' | 'secret_sealed'>, secretBox: SecretBox) => secretBox.decrypt(channel.secret_sealed, secretContext(channel._id));

/** A change; `enabled: true` enables a disabled channel again. Rejects with code 11000 for a name in use. */
export async function updateChannel(
  organizationId: Types.ObjectId,
  channel: Pick<NotificationChannel, '_id' | 'type'>,
  changes: Partial<Omit<ChannelFields, 'type'>> & { enabled?: boolean },
  secretBox: SecretBox,
  forced: Record<string, Date | string> = {},
): Promise<NotificationChannel | null> {
  const { enabled, url, ...fields } = changes;
  const id = channel._id;
  const $set: Record<string, unknown> = { ...fields, ...(url !== undefined ? storedUrl(id, channel.type as ChannelType, url, secretBox) : {}), ...forced };
  if (enabled === true) Object.assign($set, { disabled_at: null, disabled_reason: null });
  if (enabled === false) Object.assign($set, { disabled_at: new Date(), disabled_reason: 'disabled by an administrator' });
  return NotificationChannelModel.findOneAndUpdate({ _id: id, organization_id: organizationId }, { $set }, { returnDocument: 'after' }).lean<NotificationChannel>();
}

const dropOpenDeliveries = (channelId: Types.ObjectId, reason: string, session: ClientSession) =>
  NotificationDeliveryModel.updateMany({ channel_id: channelId, status: { $nin: FINAL_DELIVERY_STATUSES } }, { $set: { status: 'dropped', reason, next_attempt_at: null } }, { session });

/** A channel deleted in a transaction of the caller's: its deliveries not yet made dropped with it. False when there was none. */
export async function deleteChannelIn(session: ClientSession, organizationId: Types.ObjectId, id: Types.ObjectId): Promise<boolean> {
  const deleted = await NotificationChannelModel.deleteOne({ _id: id, organization_id: organizationId }, { session });
  if (!deleted.deletedCount) return false;
  await dropOpenDeliveries(id, 'the channel was deleted', session);
  return true;
}

/** A deleted channel: gone, and its deliveries not yet made are dropped (recorded on each). False when there was none. */
export const deleteChannel = (organizationId: Types.ObjectId, id: Types.ObjectId): Promise<boolean> => inTransaction((session) => deleteChannelIn(session, organizationId, id));

/** A receiver answered 410 Gone: the channel is disabled (recorded with why) and its other open deliveries dropped. */
export async function disableChannel(id: Types.ObjectId, reason: string, except: Types.ObjectId): Promise<void> {
  await inTransaction(async (session) => {
    const disabled = await NotificationChannelModel.updateOne({ _id: id, disabled_at: null }, { $set: { disabled_at: new Date(), disabled_reason: reason } }, { session });
    if (!disabled.modifiedCount) return;
    await NotificationDeliveryModel.updateMany(
      { channel_id: id, _id: { $ne: except }, status: { $nin: FINAL_DELIVERY_STATUSES } },
      { $set: { status: 'dropped', reason: `the channel was disabled: ${reason}`, next_attempt_at: null } },
      { session },
    );
  });
}

/** POST …/test: a `ping` for this channel alone, through the outbox like every event. */
export async function recordPing(channel: Pick<NotificationChannel, '_id' | 'organization_id' | 'name'>, by: unknown): Promise<void> {
  await recordNotificationEvent({
    organizationId: channel.organization_id,
    type: 'ping',
    subject: { kind: 'channel', id: channel._id },
    channelId: channel._id,
    payload: { summary: `A test of the notification channel ${channel.name}`, channel: { id: channel._id.toString(), name: channel.name }, requested_by: by },
  });
}
