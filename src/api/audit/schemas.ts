import { z } from 'zod';
import { pageQuerySchema } from '../http/pagination';
import { text } from '../http/text';
import { wholeNumber } from '../http/whole-numbers';

const filters = {
  actor: text('actor', { min: 1, max: 200 }).optional().describe('An identity’s id (a person, a service account) or a schedule’s, or its name'),
  actor_type: z
    .enum(['person', 'service_account', 'schedule', 'system'])
    .optional()
    .describe('Entries by this kind of actor: `system` for what Bosun did by itself (the commands it ran, a gate expiring, an automatic rollback, a freeze holding a run, a tick skipped)'),
  server: z.string().regex(/^[0-9a-fA-F]{24}$/, 'must be a server id').optional().describe('Entries about this server: its routes’ writes and every command run on it'),
  run: z
    .string()
    .regex(/^[0-9a-fA-F]{24}$/, 'must be a run id')
    .optional()
    .describe('Entries about this run: its trigger, people’s decisions on it, and every command it ran (a fleet run’s targets’ too)'),
  action: z
    .string()
    .max(100)
    .regex(/^[a-z][a-z0-9_.-]*(\.\*)?$/, 'an action such as "run.trigger", or a family such as "run.*"')
    .optional()
    .describe('An action ("run.trigger", "command.run") or a family ("run.*")'),
  since: z.iso.datetime({ offset: true }).optional().describe('Entries whose change began at or after this time (ISO 8601)'),
  until: z.iso.datetime({ offset: true }).optional().describe('Entries whose change began before this time (ISO 8601)'),
};

/**
 * The trail's list: the filters, and a page given by a cursor (`before` or `after` a seq, as the last
 * page's meta names them) or by its number; any other field is refused (422).
 */
export const auditQuerySchema = z
  .strictObject({
    ...filters,
    before: wholeNumber('before', { min: 1 }).optional().describe('The page of entries older than this seq (the last page’s `meta.older_before`): a cursor, as fast on the millionth page as on the first'),
    after: wholeNumber('after', { min: 0 }).optional().describe('The page of entries just newer than this seq (the last page’s `meta.newer_after`), still newest first'),
    page: wholeNumber('page', { min: 1 }).optional().describe('A page by its number (1: the newest); not with `before` or `after`'),
    per_page: pageQuerySchema.shape.per_page,
  })
  .refine((query) => [query.before, query.after, query.page].filter((given) => given !== undefined).length <= 1, {
    message: 'give one of before, after and page: a page is found by one cursor or by its number',
    path: ['before'],
  });
/** The export: the same filters, every entry (no pages). */
export const auditExportQuerySchema = z.strictObject(filters);

export const checkpointSchema = z
  .strictObject({
    seq: z.number().int().min(0).describe('The checkpoint’s entry'),
    hash: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex (64 lowercase digits)').describe('Its hash as published'),
  })
  .meta({ id: 'AuditCheckpoint' });

export const verifyBodySchema = z.strictObject({
  checkpoint: checkpointSchema.optional().describe('A head published earlier (audit.checkpoint, or the log): the trail must still hold it, which catches deleted newest entries'),
});
