import { z } from 'zod';
import { AUTH_METHODS } from '../../domain/servers/model';
import { INVENTORY_FORMATS } from '../../domain/inventory/inventory';
import { text } from '../http/text';
import { tagListSchema } from './schemas';

/*
 * `POST /servers/import`: an inventory (Ansible INI or YAML, or an OpenSSH config) in, the diff
 * against the servers an earlier import of the same `source` made out — applied unless `dry_run`.
 */

export const importServersSchema = z.strictObject({
  format: z.enum(INVENTORY_FORMATS, { error: `format is one of ${INVENTORY_FORMATS.join(', ')}` }),
  source: text('source', { min: 1, max: 100 }).regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, 'source is letters, digits and . _ : / - (starting with a letter or digit)'),
  content: text('content', { max: 1024 * 1024 }),
  defaults: z
    .strictObject({
      username: text('defaults.username', { min: 1, max: 64 }).optional().describe('For hosts the inventory gives no user (ansible_user, User)'),
      auth_method: z.enum(AUTH_METHODS).optional(),
      private_key: text('private_key', { min: 1, max: 16 * 1024 }).optional(),
      passphrase: text('passphrase', { max: 1024 }).optional(),
      password: text('password', { min: 1, max: 1024 }).optional(),
      tags: tagListSchema.optional().describe('Added to every imported server, beside the tags of its groups'),
    })
    .default({})
    .describe('Credentials for the servers to add (required when applying an import that adds servers), and what every host gets'),
  dry_run: z.boolean({ error: 'dry_run is required: true previews the diff, false applies it' }).describe('Required: true previews the diff and changes nothing; false applies it'),
});

export type ImportServersInput = z.infer<typeof importServersSchema>;

const hops = {
  via: z.array(z.string()).describe('Jump hosts by name, in hop order (ProxyJump, `-J`)'),
  via_ids: z.array(z.string().nullable()).describe('Each hop’s server id: null for a hop that is a host this import adds, until it is applied'),
};

const fieldChange = z.object({ from: z.unknown(), to: z.unknown() });

export const importDiffSchema = z
  .object({
    dry_run: z.boolean(),
    source: z.string(),
    add: z.array(z.object({ id: z.string().nullable().describe('Null in a dry run'), title: z.string(), host: z.string(), port: z.number().int(), username: z.string(), tags: z.array(z.string()), ...hops, line: z.number().int() })),
    change: z.array(z.object({ id: z.string(), title: z.string(), fields: z.record(z.string(), fieldChange).describe('host, port, username, tags, via: each as { from, to }'), ...hops })),
    unchanged: z.array(z.object({ id: z.string(), title: z.string() })),
    missing: z.array(z.object({ id: z.string(), title: z.string(), host: z.string() }).describe('Imported from this source before, not in it now: quarantined when applied')),
    warnings: z.array(z.string()),
    counts: z.object({ add: z.number().int(), change: z.number().int(), unchanged: z.number().int(), missing: z.number().int() }),
    verification: z
      .object({ workflow_id: z.string(), servers: z.number().int(), concurrency: z.number().int() })
      .nullable()
      .describe('When applied with servers to add: the workflow verifying them; poll the servers for their status'),
  })
  .meta({ id: 'InventoryImport' });

export type ImportDiff = z.infer<typeof importDiffSchema>;
