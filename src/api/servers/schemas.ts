import { z } from 'zod';

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const isIp = (value: string) => z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success;

const common = {
  title: z.string().trim().min(1, 'title is required').max(120),
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

export const verifyServerSchema = z.strictObject({
  trust_new_host_key: z.boolean().default(false),
});
