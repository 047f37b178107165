import { z } from 'zod';
import { SERVER_STATUSES } from '../../domain/servers/model';
import { MAX_HOPS } from '../../domain/servers/route';
import { requiredText, text } from '../http/text';

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** A server's tag: what a deployment's targets select servers by. */
export const tagSchema = z
  .string()
  .max(63, 'a tag has at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9._:-]*$/, 'a tag is lowercase letters, digits and . _ : - (starting with a letter or digit)');

export const MAX_TAGS = 20;

/** Up to 20 tags. */
export const tagListSchema = z.array(tagSchema).max(MAX_TAGS, `at most ${MAX_TAGS} tags`);

/** Up to 20 tags; repeats dropped, first order kept. */
const tagsSchema = tagListSchema.transform((tags) => [...new Set(tags)]);

const title = requiredText('title', 120);

/** The jump hosts a server is reached through, in order (`ssh -J`): ids of servers of the organization. */
const viaSchema = z
  .array(z.string().regex(/^[0-9a-f]{24}$/, 'a server id'))
  .max(MAX_HOPS, `at most ${MAX_HOPS} jump hosts`)
  .describe('The jump hosts this server is reached through, outermost first (each a verified server of the organization; the first one\'s own `via` is followed too)');

const common = {
  title,
  tags: tagsSchema.default([]),
  // IPv6 by its pattern alone (zod's own check takes more forms than the pattern the document carries).
  host: z.union([z.string().regex(HOSTNAME), z.ipv4(), z.string().regex(z.regexes.ipv6)], { error: 'host must be a host name or an IP address' }),
  port: z.number().int().min(1).max(65535).default(22),
  via: viaSchema.default([]),
  username: text('username', { min: 1, max: 64 }).regex(/^[A-Za-z0-9_.][A-Za-z0-9_.@-]*\$?$/, 'username has characters a login name cannot have'),
};

/** Where a server is and who logs in: what an inventory import checks each host against, as `POST /servers` does. */
export const serverAddressSchema = z.object({ title, host: common.host, port: common.port, username: common.username });

export const createServerSchema = z.discriminatedUnion(
  'auth_method',
  [
    z.strictObject({
      ...common,
      auth_method: z.literal('private_key'),
      private_key: text('private_key', { min: 1, max: 16 * 1024 }),
      passphrase: text('passphrase', { max: 1024 }).optional(),
    }),
    z.strictObject({
      ...common,
      auth_method: z.literal('password'),
      password: text('password', { min: 1, max: 1024 }),
    }),
  ],
  { error: 'auth_method must be "private_key" or "password"' },
);

export type CreateServerInput = z.infer<typeof createServerSchema>;

export const updateServerSchema = z
  .strictObject({ title: title.optional(), tags: tagsSchema.optional(), via: viaSchema.optional() })
  .refine((v) => v.title !== undefined || v.tags !== undefined || v.via !== undefined, 'send at least one of title, tags, via')
  // The refinement, as the document states it.
  .meta({ minProperties: 1 });

export type UpdateServerInput = z.infer<typeof updateServerSchema>;

/** `GET /servers?tag=web&tag=eu&status=verified`: servers having all the tags, in that status. */
export const serverListFilterSchema = z.object({
  tag: z
    .union([tagSchema, tagListSchema])
    .optional()
    .transform((t) => (t === undefined ? [] : Array.isArray(t) ? t : [t])),
  status: z.enum(SERVER_STATUSES, { error: `status is one of ${SERVER_STATUSES.join(', ')}` }).optional(),
});

/** `tag` as the document states it: a query parameter repeated once per tag. */
export const tagFilterSchema = tagListSchema.optional().describe('A tag the servers must have (repeat for more: all must match)');

export const verifyServerSchema = z.strictObject({
  trust_new_host_key: z.boolean().default(false),
});
