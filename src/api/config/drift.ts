import { z } from 'zod';
import type { KindAdapter } from '../../domain/config/types';
import type { Principal } from '../../domain/tokens/service';
import { mayReadKind } from '../access/gate';
import { driftOf } from './diff';
import { loadNames } from './names';

/* GET /config/drift: the objects Git manages that were changed since by another path, whatever their source. */

export const driftedObjectSchema = z.strictObject({
  kind: z.string().describe('The kind of definition (`Deployment`, …)'),
  id: z.string().describe('The object’s id (its page: /deployments/{id}, …)'),
  name: z.string(),
  source: z.string().describe('The source that applied it'),
  revision: z.string().nullable().describe('The commit it was applied from'),
  path: z.string().describe('The file that defines it'),
  forced_at: z.string().nullable().describe('When a change with `force: true` overrode the file (null: nobody forced it, its spec changed another way)'),
  forced_by: z.string().nullable().describe('Who forced it'),
});

export type DriftedObject = z.infer<typeof driftedObjectSchema>;

/** Every drifted object of the kinds the caller may read whole (the export's rule), by kind then name. */
export async function driftedObjects(principal: Principal, adapters: readonly KindAdapter[]): Promise<DriftedObject[]> {
  const readable = adapters.filter((adapter) => mayReadKind(principal, adapter.kind));
  const names = await loadNames(principal.organizationId);
  const listed = await Promise.all(
    readable.map(async (adapter) =>
      (await adapter.current(principal.organizationId, names))
        .filter(driftOf)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((object) => ({
          kind: adapter.kind,
          id: object.id,
          name: object.name,
          source: object.managed_by!.source,
          revision: object.managed_by!.revision,
          path: object.managed_by!.path,
          forced_at: object.managed_by!.forced_at?.toISOString() ?? null,
          forced_by: object.managed_by!.forced_by,
        })),
    ),
  );
  return listed.flat();
}
