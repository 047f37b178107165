import { Types } from 'mongoose';
import { z } from 'zod';
import type { KindAdapter, SpecProblem } from '../../../domain/config/types';
import { deleteChannelIn, sealedNewSecret } from '../../../domain/notifications/channels';
import { NotificationChannelModel, type NotificationChannel } from '../../../domain/notifications/model';
import type { SecretBox } from '../../../domain/secrets/secret-box';
import { actorOf } from '../../../domain/tokens/service';
import { channelFilterSchema, createChannelSchema } from '../../notifications/schemas';
import { checked, checkSecretReference, managedByOf, namesOf, resolve, schemaProblems } from './references-b';

export const PLAIN_CHANNEL_URL = "a channel's url is secret: use ${secret:NAME}";

/** A channel's spec: the create body with its url a secret's reference and its filter's deployments by name. */
const fileSchema = z.strictObject({
  type: createChannelSchema.shape.type,
  url: z.string().max(2000).describe('${secret:NAME}: an organization secret holding the http(s) URL (a webhook or Slack URL is a credential)'),
  events: createChannelSchema.shape.events,
  filter: channelFilterSchema
    .extend({ deployments: z.array(z.string().min(1).max(120)).max(100).nullable().optional().describe('Only these deployments’ events, by name') })
    .optional(),
});
type ChannelSpec = z.infer<typeof fileSchema>;

/** The filter as the API stores it: empty lists are none, tags once each. */
const filterSpec = (filter: ChannelSpec['filter'], deployments: string[] | null) => ({
  deployments: deployments?.length ? deployments : null,
  tags: filter?.tags?.length ? [...new Set(filter.tags)] : null,
  only_final_failure: filter?.only_final_failure ?? false,
});

const channelSpec = (spec: Pick<ChannelSpec, 'type' | 'url' | 'events'>, filter: ReturnType<typeof filterSpec>): Record<string, unknown> => ({ type: spec.type, url: spec.url, events: [...spec.events], filter });

/**
 * What a channel made through the API (its url sealed, never written in a file) shows for its url as
 * files write it: a reference to a secret of its name, to be made (PUT /api/v1/secrets/NAME) before
 * an apply of it can pass.
 */
export const secretStandIn = (channelName: string) => `\${secret:${`CHANNEL_${channelName}_URL`.toUpperCase().replace(/[^A-Z0-9_]/g, '_').slice(0, 64)}}`;

/**
 * Notification channels kept in Git: the url is `${secret:NAME}`, stored as the reference and
 * resolved by the sender at each delivery; the signing secret is generated on create (never in files).
 */
export function createNotificationChannelKind({ secretBox }: { secretBox: SecretBox }): KindAdapter {
  return {
    kind: 'NotificationChannel',
    fileSchema,
    nameSchema: createChannelSchema.shape.name,

    async current(organizationId, names) {
      const found = await NotificationChannelModel.find({ organization_id: new Types.ObjectId(organizationId) }).sort({ name: 1 }).lean<NotificationChannel[]>();
      return found.map((c) => {
        const deployments = c.filter?.deployments ? namesOf(names, 'Deployment', c.filter.deployments) : null;
        const filter = { deployments, tags: c.filter?.tags ?? null, only_final_failure: c.filter?.only_final_failure ?? false };
        return { id: c._id.toString(), name: c.name, spec: channelSpec({ type: c.type as ChannelSpec['type'], url: c.url_sealed ? secretStandIn(c.name) : c.url, events: c.events as ChannelSpec['events'] }, filter), managed_by: managedByOf(c.managed_by) };
      });
    },

    async check(spec, context) {
      const parsed = fileSchema.safeParse(spec);
      if (!parsed.success) return checked(schemaProblems(parsed.error), () => ({}));
      const problems: SpecProblem[] = [];
      checkSecretReference(parsed.data.url, context.secrets, ['url'], PLAIN_CHANNEL_URL, problems);
      const ids = (parsed.data.filter?.deployments ?? []).map((name, i) => resolve(context.names, 'Deployment', name, ['filter', 'deployments', i], problems));
      const deployments = [...new Set(ids)].map((id) => context.names.nameOf('Deployment', id!)!);
      return checked(problems, () => channelSpec(parsed.data, filterSpec(parsed.data.filter, deployments)));
    },

    async write(context, object) {
      const spec = fileSchema.parse(object.spec);
      const ids = [...new Set((spec.filter?.deployments ?? []).map((name) => context.names.idOf('Deployment', name)!))];
      const filter = { ...filterSpec(spec.filter, ids), deployments: ids.length ? ids.map((id) => new Types.ObjectId(id)) : null };
      // The reference is the url: the sender resolves it (channelUrl); nothing is sealed.
      const fields = { name: object.name, type: spec.type, url: spec.url, url_sealed: null, events: spec.events, filter, managed_by: object.managed_by };
      const _id = new Types.ObjectId(object.id);
      const organization_id = new Types.ObjectId(context.organizationId);
      if (!object.existing) {
        await NotificationChannelModel.create([{ _id, organization_id, ...fields, secret_sealed: sealedNewSecret(_id, secretBox), created_by: actorOf(context.principal) }], { session: context.session });
        return;
      }
      await NotificationChannelModel.updateOne({ _id, organization_id }, { $set: fields }, { session: context.session });
    },

    async remove(context, id) {
      await deleteChannelIn(context.session, new Types.ObjectId(context.organizationId), new Types.ObjectId(id));
    },

    pruneBlocker: async () => null,
  };
}
