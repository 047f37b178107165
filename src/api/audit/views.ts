import { z } from 'zod';
import { timestampSchema } from '../http/timestamps';
import type { AuditEntry } from '../../domain/audit/model';
import { hashedFields } from '../../domain/audit/chain';
import type { TrailPage } from '../../domain/audit/pages';
import { pageMeta, pageMetaSchema } from '../http/pagination';
import { subjectsOf, subjectsSchema } from './subjects';

export const auditEntrySchema = z
  .object({
    seq: z.number().int().min(1).describe('Its place in the organization’s chain, from 1, without gaps'),
    at: timestampSchema.describe('When the change began (its entry was written before it)'),
    actor: z.object({
      type: z.enum(['person', 'service_account', 'schedule', 'system']),
      id: z.string().nullable(),
      name: z.string(),
      token_id: z.string().nullable().optional(),
      session_id: z.string().nullable().optional(),
      run_as: z.object({ id: z.string(), name: z.string() }).nullable().optional().describe('A schedule’s tick: the service account it runs as'),
    }),
    source_address: z.string().nullable().describe('The client’s address (API and console entries)'),
    action: z.string().describe('What was done: "server.create", "run.trigger", "command.run", "session.sign_in", …'),
    target: z.object({ kind: z.string(), id: z.string().nullable(), name: z.string().nullable().optional() }),
    server_id: z.string().nullable(),
    outcome: z.string().describe('`ok`; an error code (`forbidden`, `validation_failed`, …); a command’s `failed`, `timed_out`, `cancelled`, `interrupted`, `ssh_error`; or `unknown` (Bosun stopped between the change and its outcome)'),
    details: z.record(z.string(), z.unknown()).describe('The route and its path parameters; a command’s redacted text, its SHA-256, exit code, run or conversation and step'),
    prev_hash: z.string().describe('The previous entry’s hash (64 zeros before the first)'),
    hash: z.string().describe('SHA-256 of prev_hash followed by the entry’s canonical JSON (docs/audit.md)'),
  })
  .meta({ id: 'AuditEntry' });

export type AuditEntryView = z.infer<typeof auditEntrySchema>;

export const verdictSchema = z
  .object({
    ok: z.boolean(),
    checked: z.number().int().min(0).describe('Entries checked'),
    first_broken: z.object({ seq: z.number().int(), reason: z.string() }).nullable().describe('The first broken link: a changed, deleted or reordered entry, or a checkpoint no longer held'),
  })
  .meta({ id: 'AuditVerdict' });

/** An entry as the API shows it (and exports it): what its hash covers, and the hash. */
export function auditEntryView(entry: AuditEntry): AuditEntryView {
  const { organization_id: _organization, ...hashed } = hashedFields(entry);
  return { ...hashed, at: entry.at.toISOString(), hash: entry.hash };
}

export const checkpointViewSchema = z
  .object({
    seq: z.number().int().min(0),
    hash: z.string(),
    at: timestampSchema.describe('When the head was recorded (and published as an audit.checkpoint notification)'),
  })
  .meta({ id: 'AuditCheckpointRecord' });

export const checkpointView = (checkpoint: { seq: number; hash: string; at: Date }) => ({ seq: checkpoint.seq, hash: checkpoint.hash, at: checkpoint.at.toISOString() });

/** An entry as the list shows it: the entry, and what it is about named as it is now. */
export const listedEntrySchema = auditEntrySchema.extend({ subjects: subjectsSchema }).meta({ id: 'AuditListedEntry' });

export const auditPageMetaSchema = pageMetaSchema
  .extend({
    offset: z.number().int().min(0).describe('Entries matching the filter newer than this page’s first: this page holds entries offset + 1 to offset + its length'),
    older_before: z.number().int().nullable().describe('The next older page is `?before=` this; null: this page holds the oldest'),
    newer_after: z.number().int().nullable().describe('The next newer page is `?after=` this; null: this page holds the newest'),
  })
  .meta({ id: 'AuditPageMeta', description: 'Where this page lies, and the cursors of its neighbours (`current_page` is its place counted in pages of `per_page`)' });

/** One page of the trail as the list answers it. */
export async function auditPageView(organizationId: string, page: TrailPage, perPage: number) {
  const subjects = await subjectsOf(organizationId, page.entries);
  return {
    data: page.entries.map((entry, i) => ({ ...auditEntryView(entry), subjects: subjects[i]! })),
    meta: {
      ...pageMeta({ page: Math.floor(page.offset / perPage) + 1, per_page: perPage }, page.total),
      offset: page.offset,
      older_before: page.olderBefore,
      newer_after: page.newerAfter,
    },
  };
}
