import { z } from 'zod';
import type { ConfigKind } from '../../domain/config/types';
import type { StoredManagedBy } from './views';
import type { Principal } from '../../domain/tokens/service';
import { assertMayForceManaged } from '../access/gate';
import { ApiError } from '../http/errors';

/*
 * Ownership of definitions applied from Git (issue 38): an object a source manages changes only
 * through that source, unless an organization admin forces it. Every service that changes or deletes
 * a definition asks `checkOwnership` before it writes, so the API, the console, the CLI and the MCP
 * tools (all of which reach those services) meet the same 409.
 */

export const forceField = z
  .boolean()
  .optional()
  .describe('Change it even though a Git source manages it (role admin for the whole organization): it then shows as drifted until the source applies again');

/** A DELETE's query: `?force=true` deletes an object a Git source manages (role admin for the whole organization). */
export const forceQuerySchema = z.object({
  force: z.enum(['true', 'false']).optional().describe('`true`: delete it even though a Git source manages it (role admin for the whole organization)'),
});

export const forceOf = (query: z.infer<typeof forceQuerySchema>) => query.force === 'true';

/** The definition a request would change: its kind and name as files write them, its owner, and where that owner is stored. */
export interface OwnedDefinition {
  kind: ConfigKind;
  name: string;
  managedBy: StoredManagedBy | null | undefined;
  /** The document's field holding `managed_by` (the organization keeps its policy's as `policy_managed_by`). */
  field?: string;
}

/** What a forced change also sets, in the same write: who forced it and when (an empty object when nothing is forced). */
export type ForcedMark = Record<string, Date | string>;

const describe = ({ kind, name }: OwnedDefinition) => (kind === 'Policy' ? 'The command policy' : `${kind} "${name}"`);

/**
 * May the caller change (or delete) this definition? Unmanaged: yes. Managed: 409 `managed_by_source`
 * naming the source and file, unless `force` is given by an organization admin (403 for anyone else);
 * then the fields to set with the change so the object shows as drifted.
 */
export function checkOwnership(principal: Principal, owned: OwnedDefinition, request: { force: boolean; deleting?: boolean }): ForcedMark {
  const { managedBy, field = 'managed_by' } = owned;
  if (!managedBy) return {};
  const what = describe(owned);
  if (!request.force) {
    const how = request.deleting ? 'pass ?force=true' : 'send "force": true';
    throw new ApiError('managed_by_source', `${what} is managed in Git (source ${managedBy.source}, ${managedBy.path}): change it there, or ${how}`);
  }
  assertMayForceManaged(principal, what);
  return { [`${field}.forced_at`]: new Date(), [`${field}.forced_by`]: principal.identity.name };
}

/**
 * A delete that takes other definitions with it (a deployment's or pipeline's schedules): each one a
 * Git source manages is refused as its own delete would be (409 naming it), or forced with the parent.
 */
export function checkOwnedWith(principal: Principal, children: ReadonlyArray<OwnedDefinition>, request: { force: boolean }): void {
  for (const child of children) checkOwnership(principal, child, { force: request.force, deleting: true });
}
