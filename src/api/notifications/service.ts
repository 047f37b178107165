import { Types } from 'mongoose';
import { isDuplicateKey } from '../../domain/database';
import { DeploymentModel } from '../../domain/deployments/model';
import { AddressRefused, allowedAddresses, schemeRefusal } from '../../domain/notifications/addresses';
import * as channels from '../../domain/notifications/channels';
import { redeliver } from '../../domain/notifications/deliveries';
import { NotificationChannelModel, NotificationDeliveryModel, type NotificationChannel, type NotificationDelivery } from '../../domain/notifications/model';
import { notificationSettings, setNotificationSettings, type NotificationSettings } from '../../domain/notifications/settings';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { withPendingReasons } from './pending';
import type { CreateChannelInput, UpdateChannelInput } from './schemas';
import { toChannelView, toDeliveryView } from './views';
import { checkOwnership } from '../ownership/guard';

const invalid = (path: string, message: string) => new ApiError('validation_failed', `${path}: ${message}`, [{ path, message }]);
const taken = (name: string) => new ApiError('conflict', `A notification channel named "${name}" already exists in the organization`);

/** The channels routes' work, for an administrator of the whole organization (the routes' gate). */
export function createNotificationService({ secretBox }: { secretBox: SecretBox }) {
  const org = (principal: Principal) => new Types.ObjectId(principal.organizationId);

  async function findChannel(principal: Principal, id: string): Promise<NotificationChannel> {
    const channel = await NotificationChannelModel.findOne({ _id: parseId(id, 'Notification channel'), organization_id: org(principal) }).lean<NotificationChannel>();
    if (!channel) throw notFound('Notification channel');
    return channel;
  }

  /** The URL's host resolves to addresses the organization may send to (checked again at each delivery). */
  async function checkUrl(principal: Principal, url: string) {
    const scheme = schemeRefusal(url);
    if (scheme) throw invalid('url', `must be ${scheme === 'not a URL' ? 'a valid http or https URL' : scheme}`);
    const { refuse_private_addresses } = await notificationSettings(principal.organizationId);
    try {
      await allowedAddresses(url, refuse_private_addresses);
    } catch (error) {
      if (error instanceof AddressRefused) throw invalid('url', error.message);
      throw error;
    }
  }

  /** The deployments of a filter, each one of the organization's. */
  async function deploymentsOf(principal: Principal, ids: string[] | null | undefined) {
    if (!ids?.length) return null;
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const found = await DeploymentModel.find({ _id: { $in: unique.map((id) => new Types.ObjectId(id)) }, organization_id: org(principal) }, { _id: 1 }).lean();
    const missing = unique.filter((id) => !found.some((d) => d._id.toString() === id));
    if (missing.length) throw invalid('filter.deployments', `no deployment ${missing.join(', ')} in the organization`);
    return found.map((d) => d._id);
  }

  const filterOf = async (principal: Principal, filter: CreateChannelInput['filter']) => ({
    deployments: await deploymentsOf(principal, filter?.deployments),
    tags: filter?.tags?.length ? [...new Set(filter.tags)] : null,
    only_final_failure: filter?.only_final_failure ?? false,
  });

  return {
    async list(principal: Principal) {
      const found = await NotificationChannelModel.find({ organization_id: org(principal) }).sort({ name: 1 }).lean<NotificationChannel[]>();
      return found.map(toChannelView);
    },

    async create(principal: Principal, input: CreateChannelInput) {
      await checkUrl(principal, input.url);
      const fields = { name: input.name, type: input.type, url: input.url, events: input.events, filter: await filterOf(principal, input.filter) };
      try {
        const { channel, secret } = await channels.createChannel(org(principal), fields, secretBox, actorOf(principal));
        return { ...toChannelView(channel), secret };
      } catch (error) {
        if (isDuplicateKey(error)) throw taken(input.name);
        throw error;
      }
    },

    get: async (principal: Principal, id: string) => toChannelView(await findChannel(principal, id)),

    async update(principal: Principal, id: string, { force = false, ...input }: UpdateChannelInput) {
      const current = await findChannel(principal, id);
      const forced = checkOwnership(principal, { kind: 'NotificationChannel', name: current.name, managedBy: current.managed_by }, { force });
      if (input.url !== undefined) await checkUrl(principal, input.url);
      const changes = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.events !== undefined ? { events: input.events } : {}),
        ...(input.filter !== undefined ? { filter: await filterOf(principal, { ...{ deployments: current.filter?.deployments?.map(String) ?? null, tags: current.filter?.tags ?? null, only_final_failure: current.filter?.only_final_failure ?? false }, ...input.filter }) } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      };
      try {
        const updated = await channels.updateChannel(org(principal), current, changes, secretBox, forced);
        if (!updated) throw notFound('Notification channel');
        return toChannelView(updated);
      } catch (error) {
        if (isDuplicateKey(error)) throw taken(input.name ?? current.name);
        throw error;
      }
    },

    async remove(principal: Principal, id: string, force = false) {
      const channel = await findChannel(principal, id);
      checkOwnership(principal, { kind: 'NotificationChannel', name: channel.name, managedBy: channel.managed_by }, { force, deleting: true });
      if (!(await channels.deleteChannel(org(principal), channel._id))) throw notFound('Notification channel');
    },

    async deliveries(principal: Principal, id: string, page: PageQuery, status?: string) {
      const channel = await findChannel(principal, id);
      const found = await findPage<NotificationDelivery, ReturnType<typeof toDeliveryView>>(NotificationDeliveryModel, { channel_id: channel._id, ...(status ? { status } : {}) }, page, toDeliveryView, { event_at: -1, _id: -1 });
      return { ...found, data: await withPendingReasons(channel, found.data) };
    },

    async redeliver(principal: Principal, id: string, deliveryId: string) {
      const channel = await findChannel(principal, id);
      const again = await redeliver(channel._id, parseId(deliveryId, 'Delivery'));
      if (!again) throw notFound('Delivery');
      return (await withPendingReasons(channel, [toDeliveryView(again as NotificationDelivery)]))[0]!;
    },

    async test(principal: Principal, id: string) {
      const channel = await findChannel(principal, id);
      await channels.recordPing(channel, actorOf(principal));
    },

    settings: (principal: Principal) => notificationSettings(principal.organizationId),
    setSettings: (principal: Principal, settings: NotificationSettings) => setNotificationSettings(principal.organizationId, settings),
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
