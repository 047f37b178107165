import { z } from 'zod';
import type { ServerFingerprint } from '../../domain/ssh/fingerprint';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { AUTH_METHODS, SERVER_STATUSES, type Server } from '../../domain/servers/model';
import { freezeNoticesSchema, type serverFreezeNotices } from './freeze-notices';

const fingerprintSchema = z
  .object({
    os: z.object({ name: z.string(), version: z.string(), kernel: z.string() }),
    cpu_cores: z.number().int(),
    ram: z.string().describe('Binary units, such as "23 GiB"'),
    disk: z.string().describe('Size of /, binary units'),
  })
  .meta({ id: 'Fingerprint' }) satisfies z.ZodType<ServerFingerprint>;

export const serverListItemSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    tags: z.array(z.string()).describe('What deployments’ targets select it by'),
    host: z.string(),
    port: z.number().int(),
    username: z.string(),
    via: z.array(z.string()).describe('The jump hosts it is reached through, in order (server ids); empty: directly'),
    auth_method: z.enum(AUTH_METHODS),
    status: z.enum(SERVER_STATUSES),
    last_error: z.string().nullable(),
    freezes: freezeNoticesSchema,
    created_at: timestampSchema.describe('When it was added'),
  })
  .meta({ id: 'ServerListItem' });

export const serverSchema = serverListItemSchema
  .extend({
    fingerprint: fingerprintSchema.nullable().describe('Null until the first verification succeeds'),
    host_key_fingerprint: z.string().nullable().describe('The pinned host key, SHA-256 in OpenSSH notation'),
    verified_at: timestampSchema.nullable(),
    last_checked_at: timestampSchema.nullable(),
    updated_at: timestampSchema,
  })
  .meta({ id: 'Server' });

type FreezeNotices = Awaited<ReturnType<typeof serverFreezeNotices>>;

/** The list view: everything but the fingerprint, never a secret; with the freezes covering it now or soon. */
export const toListView = (s: Server, freezes: FreezeNotices): z.infer<typeof serverListItemSchema> => ({
  id: s._id.toString(),
  title: s.title,
  tags: [...(s.tags ?? [])],
  host: s.host,
  port: s.port,
  username: s.username,
  via: (s.via ?? []).map(String),
  auth_method: s.auth_method,
  status: s.status,
  last_error: s.last_error ?? null,
  freezes,
  created_at: s.createdAt.toISOString(),
});

/** The single-server view: the list view plus the fingerprint and verification details. */
export const toDetailView = (s: Server, freezes: FreezeNotices): z.infer<typeof serverSchema> => ({
  ...toListView(s, freezes),
  fingerprint: (s.fingerprint as ServerFingerprint | null) ?? null,
  host_key_fingerprint: s.host_key_fingerprint ?? null,
  verified_at: iso(s.verified_at),
  last_checked_at: iso(s.last_checked_at),
  updated_at: s.updatedAt.toISOString(),
});
