import { Types } from 'mongoose';
import { ServerModel } from '../../domain/servers/model';
import { RouteError, routeOf, type RouteServer } from '../../domain/servers/route';
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
  const hosts = [...plan.add.map((a) => ({ host: a, id: ids.get(a.title)!.toString() })), ...plan.change.map((c) => ({ host: c.desired, id: c.server._id.toString() }))];
  const adding = new Set(plan.add.map((a) => ids.get(a.title)!.toString()));
  const planned = new Map(hosts.map(({ host, id }) => [id, { title: host.title, via: hops.get(host.title) ?? [] }]));
  const load = async (wanted: string[]) => {
    const stored = await ServerModel.find({ _id: { $in: wanted.filter((id) => !adding.has(id)).map((id) => new Types.ObjectId(id)) }, organization_id: organizationId }, { title: 1, host: 1, port: 1, username: 1, via: 1, host_key_fingerprint: 1 }).lean<RouteServer[]>();
    const found = new Map(stored.map((server) => [String(server._id), server]));
    for (const id of wanted) {
      const change = planned.get(id);
      if (!change) continue;
      const base = found.get(id) ?? { _id: new Types.ObjectId(id), title: change.title, host: '', port: 0, username: '', host_key_fingerprint: null };
      found.set(id, { ...base, title: change.title, via: change.via.map((hop) => new Types.ObjectId(hop)) });
    }
    return found;
  };
  for (const { host, id } of hosts) {
    const via = hops.get(host.title) ?? [];
    if (!via.length) continue;
    const refuse = (why: string) => {
      const message = `line ${host.line}: ${host.title}: ${why}`;
      return new ApiError('validation_failed', `The inventory cannot be imported: ${message}`, [{ path: 'content', message }]);
    };
    try {
      const route = await routeOf({ id, organizationId, via }, load);
      const unverified = route.find((hop) => !adding.has(String(hop._id)) && !hop.host_key_fingerprint);
      if (unverified) throw refuse(`jump host "${unverified.title}" is not verified yet: verify it first`);
    } catch (error) {
      if (error instanceof RouteError) throw refuse(error.message.replace(/^via: /, ''));
      throw error;
    }
  }
}
