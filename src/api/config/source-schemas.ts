import { z } from 'zod';
import { parseHostKey } from '../../domain/config/git';
import { parseDuration } from '../../domain/time/durations';
import { durationSchema } from '../http/durations';
import { SOURCE_NAME } from './schemas';

/*
 * The bodies of /config/sources and what it answers. Credentials go in and never come out: a view
 * says only whether there are some, and the pinned host key's fingerprint.
 */

export const MIN_EVERY_SECONDS = 60;
export const MAX_EVERY_SECONDS = 86_400;

const seconds = (value: string) => {
  try {
    return parseDuration(value);
  } catch {
    return Number.NaN;
  }
};

const everySchema = durationSchema
  .refine((value) => Number.isNaN(seconds(value)) || (seconds(value) >= MIN_EVERY_SECONDS && seconds(value) <= MAX_EVERY_SECONDS), { message: 'every is between 1m and 24h' })
  .nullable()
  .describe('How often it syncs by itself ("5m", between 1m and 24h); null: only when asked (POST …/sync)');

const hostKeySchema = z
  .string()
  .max(16_384)
  .refine((line) => parseHostKey(line) !== null, { message: 'an SSH public key line, such as "ssh-ed25519 AAAA…" (a known_hosts line too)' })
  .nullable()
  .describe('The repository host’s public key line to pin (ssh URLs); without it the first sync is refused, offering the key to pin (`trust_new_host_key`)');

const credentialsSchema = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('ssh_key'),
      private_key: z.string().min(1).max(65_536).describe('A deploy key (OpenSSH or PEM private key)'),
      passphrase: z.string().max(1024).optional(),
    }),
    z.strictObject({
      type: z.literal('token'),
      token: z.string().min(1).max(4096).describe('An access token for https URLs'),
      username: z.string().min(1).max(256).optional().describe('The user the token goes with ("x-access-token" when absent)'),
    }),
  ])
  .nullable()
  .describe('How Bosun signs in to the repository: sealed at rest, never shown again; null: none (public https or git://)');

const webUrlSchema = z
  .url({ protocol: /^https$/, message: 'an https URL' })
  .max(2048)
  .nullable()
  .describe('The repository’s web view (`https://github.com/acme/platform`): a managed object links to its file as `<web_url>/blob/<revision>/<path>`');

const gitSchema = z.strictObject({
  url: z.string().min(1).max(2048).describe('ssh://git@host:22/acme/platform.git, git@host:acme/platform.git, https://… or git://…'),
  ref: z.string().min(1).max(255).default('main').describe('A branch, a tag or a full commit sha'),
  path: z.string().max(512).default('').describe('The folder of definitions inside the repository ("bosun/"); "" for all of it'),
  host_key: hostKeySchema.optional(),
});

export const createSourceSchema = z.strictObject({
  name: z
    .string()
    .regex(SOURCE_NAME, 'letters, digits, dot, dash and underscore, at most 64, starting with a letter or digit')
    .describe('Unique in the organization: the `source` of every object it applies (`managed_by.source`)'),
  git: gitSchema,
  every: everySchema.default(null),
  prune: z.boolean().default(false).describe('Delete the objects this source applied that its files no longer hold'),
  credentials: credentialsSchema.default(null),
  run_as: z.string().min(1).max(128).describe('The service account (its name or id) whose grants each sync plans and applies with'),
  web_url: webUrlSchema.default(null),
});

export const updateSourceSchema = z.strictObject({
  git: gitSchema.partial().optional(),
  every: everySchema.optional(),
  prune: z.boolean().optional(),
  credentials: credentialsSchema.optional(),
  run_as: z.string().min(1).max(128).optional(),
  web_url: webUrlSchema.optional(),
});

export const syncSourceSchema = z.strictObject({
  trust_new_host_key: z.boolean().default(false).describe('Pin the host key the last refused sync was offered (status.offered_host_key), then sync'),
});

export type CreateSourceInput = z.infer<typeof createSourceSchema>;
export type UpdateSourceInput = z.infer<typeof updateSourceSchema>;

const lastPlan = z.strictObject({
  revision: z.string().nullable(),
  plan_hash: z.string().nullable(),
  create: z.number().int(),
  update: z.number().int(),
  delete: z.number().int(),
  unchanged: z.number().int(),
  errors: z.array(z.string()).describe('The first problems, each `file:line:column: message`'),
  error_count: z.number().int(),
  at: z.string(),
});

export const sourceViewSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  git: z.strictObject({ url: z.string(), ref: z.string(), path: z.string() }),
  every: z.string().nullable(),
  prune: z.boolean(),
  run_as: z.strictObject({ id: z.string(), name: z.string() }),
  web_url: z.string().nullable(),
  has_credentials: z.boolean(),
  host_key_fingerprint: z.string().nullable(),
  status: z.strictObject({
    revision_applied: z.string().nullable(),
    last_plan: lastPlan.nullable(),
    last_error: z.strictObject({ code: z.string(), message: z.string(), at: z.string(), revision: z.string().nullable() }).nullable(),
    synced_at: z.string().nullable(),
    drift: z.array(z.strictObject({ kind: z.string(), name: z.string(), path: z.string(), forced_at: z.string().nullable(), forced_by: z.string().nullable() })),
    offered_host_key: z.strictObject({ key: z.string(), fingerprint: z.string() }).nullable().describe('The key the host offered when a sync was refused for it: pin it with POST …/sync `{ "trust_new_host_key": true }`'),
  }),
  created_at: z.string(),
  updated_at: z.string(),
});

export type SourceView = z.infer<typeof sourceViewSchema>;
