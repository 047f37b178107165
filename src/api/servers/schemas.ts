import { z } from 'zod';
import { SERVER_STATUSES } from '../../domain/servers/model';

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const isIp = (value: string) => z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success;

/** A server's tag: what a deployment's targets select servers by. */
export const tagSchema = z
  .string()
  .max(63, 'a tag has at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9._:-]*$/, 'a tag is lowercase letters, digits and . _ : - (starting with a letter or digit)');

export const MAX_TAGS = 20;

/** Up to 20 tags; repeats dropped, first order kept. */
const tagsSchema = z
  .array(tagSchema)
  .max(MAX_TAGS, `at most ${MAX_TAGS} tags`)
  .transform((tags) => [...new Set(tags)]);

const title = z.string().trim().min(1, 'title is required').max(120);

const common = {
  title,
  tags: tagsSchema.default([]),
  host: z
    .string()
    .trim()
    .min(1, 'host is required')
    .refine((h) => HOSTNAME.test(h) || isIp(h), 'host must be a host name or an IP address'),
  port: z.number().int().min(1).max(65535).default(22),
  username: z
    .string()
    .min(1, 'username is required')
    .max(64)
    .regex(/^[A-Za-z0-9_.][A-Za-z0-9_.@-]*\$?$/, 'username has characters a login name cannot have'),
};

export const createServerSchema = z.discriminatedUnion(
  'auth_method',
  [
    z.strictObject({
      ...common,
      auth_method: z.literal('private_key'),
      private_key: z.string().min(1, 'private_key is required').max(16 * 1024),
      passphrase: z.string().max(1024).optional(),
    }),
    z.strictObject({
      ...common,
      auth_method: z.literal('password'),
      password: z.string().min(1, 'password is required').max(1024),
    }),
  ],
  { error: 'auth_method must be "private_key" or "password"' },
);

export type CreateServerInput = z.infer<typeof createServerSchema>;

export const updateServerSchema = z
  .strictObject({ title: title.optional(), tags: tagsSchema.optional() })
  .refine((v) => v.title !== undefined || v.tags !== undefined, 'send at least one of title, tags');

export type UpdateServerInput = z.infer<typeof updateServerSchema>;

/** `GET /servers?tag=web&tag=eu&status=verified`: servers having all the tags, in that status. */
export const serverListFilterSchema = z.object({
  tag: z
    .union([tagSchema, z.array(tagSchema).max(MAX_TAGS, `at most ${MAX_TAGS} tags`)])
    .optional()
    .transform((t) => (t === undefined ? [] : Array.isArray(t) ? t : [t])),
  status: z.enum(SERVER_STATUSES, { error: `status is one of ${SERVER_STATUSES.join(', ')}` }).optional(),
});

export const verifyServerSchema = z.strictObject({
  trust_new_host_key: z.boolean().default(false),
});
