import { z } from 'zod';
import type { ManagedBy } from '../../domain/config/types';

/* How API views show `managed_by`: the Git source that manages an object (issue 38), or null. */

export const managedByViewSchema = z
  .object({
    source: z.string().describe('The Git source (or the `source` of a plan/apply) that applied it'),
    revision: z.string().nullable().describe('The revision (commit) applied; null when the apply named none'),
    path: z.string().describe('The file it is defined in'),
    url: z.string().nullable().describe('The file on the source’s web host, when known'),
    drifted: z.boolean().describe('Changed since through another path (`force: true`): the next apply puts the file’s version back'),
  })
  .nullable()
  .describe('The Git source that manages it: changes through the API answer 409 `managed_by_source` unless forced. Null: not managed')
  .meta({ id: 'ManagedBy' });

export type ManagedByView = z.infer<typeof managedByViewSchema>;

/** `managed_by` as a model reads it back (mongoose types its optional fields loosely). */
export type StoredManagedBy = Pick<ManagedBy, 'source' | 'path'> & { revision?: string | null; url?: string | null; forced_at?: Date | null };

/** How an API view shows `managed_by` (null: not managed). */
export const managedByView = (managedBy: StoredManagedBy | null | undefined): ManagedByView =>
  managedBy ? { source: managedBy.source, revision: managedBy.revision ?? null, path: managedBy.path, url: managedBy.url ?? null, drifted: managedBy.forced_at != null } : null;
