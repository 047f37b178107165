import { Types } from 'mongoose';
import { checkPlannedRoutes, RouteError } from '../../domain/servers/route';
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

/** The hops of a server as its document holds them (`via`, ordered server ids). */
export function serverViaFields(hopIds: string[]): { via: Types.ObjectId[] } {
  return { via: hopIds.map((id) => new Types.ObjectId(id)) };
}

/**
 * The jump-host rules of `POST /servers` applied to an import as a whole: every hop a server of the
 * organization that is verified or added (and so verified first) by this import, no cycle, at most
 * MAX_HOPS in all — each host's route computed over the servers as the import would leave them.
 * 422 naming the host's line otherwise.
 */
export async function checkImportRoutes(organizationId: string, plan: ImportPlan, hops: Map<string, string[]>, ids: Map<string, Types.ObjectId>): Promise<void> {
  const hosts = new Map([...plan.add.map((a) => [ids.get(a.title)!.toString(), a] as const), ...plan.change.map((c) => [c.server._id.toString(), c.desired] as const)]);
  const adding = new Set(plan.add.map((a) => ids.get(a.title)!.toString()));
  const refuse = (id: string, why: string) => {
    const host = hosts.get(id)!;
    const message = `line ${host.line}: ${host.title}: ${why}`;
    return new ApiError('validation_failed', `The inventory cannot be imported: ${message}`, [{ path: 'content', message }]);
  };
  let routes;
  try {
    routes = await checkPlannedRoutes(organizationId, new Map([...hosts].map(([id, host]) => [id, { title: host.title, via: hops.get(host.title) ?? [] }])));
  } catch (error) {
    if (error instanceof RouteError) throw refuse(error.serverId!, error.message.replace(/^via: /, ''));
    throw error;
  }
  for (const [id, route] of routes) {
    const unverified = route.find((hop) => !adding.has(String(hop._id)) && !hop.host_key_fingerprint);
    if (unverified) throw refuse(id, `jump host "${unverified.title}" is not verified yet: verify it first`);
  }
}
