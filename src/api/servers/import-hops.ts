import type { Types } from 'mongoose';
import { ApiError } from '../http/errors';
import type { ImportPlan, KnownServer } from './import-plan';

/*
 * Jump hosts of imported servers are named in the inventory; each name is a host of the same
 * inventory or a server of the organization (by title, then host). Resolved to server ids here.
 */

/** Each host's hops as server ids, by title: null for a hop this import adds, while its id is not yet given. */
export function resolveHops(plan: ImportPlan, known: KnownServer[], addedIds: Map<string, Types.ObjectId>): Map<string, (string | null)[]> {
  const inventoryIds = new Map<string, string | null>([
    ...plan.change.map((c) => [c.desired.title, c.server._id.toString()] as const),
    ...plan.unchanged.map((u) => [u.desired.title, u.server._id.toString()] as const),
    ...plan.add.map((a) => [a.title, addedIds.get(a.title)?.toString() ?? null] as const),
  ]);
  const byTitle = new Map(known.map((s) => [s.title, s._id.toString()]));
  const byHost = new Map(known.map((s) => [s.host, s._id.toString()]));
  const resolved = new Map<string, (string | null)[]>();
  const hosts = [...plan.add, ...plan.change.map((c) => c.desired), ...plan.unchanged.map((u) => u.desired)];
  for (const host of hosts) {
    resolved.set(
      host.title,
      host.via.map((hop) => {
        const id = inventoryIds.has(hop) ? inventoryIds.get(hop)! : (byTitle.get(hop) ?? byHost.get(hop));
        if (id === undefined) {
          const message = `line ${host.line}: jump host "${hop}" of ${host.title} is neither a host of this inventory nor a server of the organization`;
          throw new ApiError('validation_failed', `The inventory cannot be imported: ${message}`, [{ path: 'content', message }]);
        }
        return id;
      }),
    );
  }
  return resolved;
}

/**
 * The seam where resolved hops reach the server document. Servers have no `via` on this branch: the
 * jump-hosts work (Server.via, ordered hop ids) returns `{ via: hopIds }` here when it is merged.
 */
export function serverViaFields(_hopIds: string[]): Record<string, never> {
  return {};
}
