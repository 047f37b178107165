import { Types } from 'mongoose';
import { ServerModel } from './model';

/** The most jump hosts between Bosun and a server. */
export const MAX_HOPS = 4;

/** What is wrong with a server's `via`: refused (422) when set, a failure no retry fixes when met at connection time. */
export class RouteError extends Error {
  override name = 'RouteError';
  /** The server whose (planned) `via` breaks the route: itself, or one its route goes through. */
  serverId?: string;
}

/** What the route needs of a server: its id, name, address, its own `via`, and whether its host key is pinned. */
export interface RouteServer {
  _id: Types.ObjectId;
  title: string;
  host: string;
  port: number;
  username: string;
  via?: Types.ObjectId[] | null;
  host_key_fingerprint?: string | null;
}

const HOP_FIELDS = { title: 1, host: 1, port: 1, username: 1, via: 1, host_key_fingerprint: 1 } as const;

/**
 * The jump hosts to a server, outermost first. A server's `via` lists its hops in order; the first
 * hop's own `via` is followed too (as OpenSSH follows a jump host's own ProxyJump), so the chain is
 * the first hop's route, then the `via` list. Refused (RouteError): a hop that does not exist in the
 * organization, one met twice or the server itself (a cycle), a chain longer than MAX_HOPS.
 */
export async function routeOf<T extends RouteServer>(server: { id: string; via: readonly string[] }, load: (ids: string[]) => Promise<Map<string, T>>): Promise<T[]> {
  const known = new Map<string, T>();
  const fetch = async (ids: readonly string[]) => {
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length) for (const [id, hop] of await load(missing)) known.set(id, hop);
    for (const id of ids) if (!known.has(id)) throw new RouteError(`via: server ${id} is not a server of this organization`);
  };
  const expand = async (id: string, via: readonly string[], seen: readonly string[]): Promise<string[]> => {
    if (!via.length) return [];
    await fetch(via);
    const first = via[0]!;
    if (seen.includes(first)) throw new RouteError(`via: ${nameOf(known, first)} leads back to ${nameOf(known, seen[0]!)} (a cycle)`);
    const before = await expand(first, (known.get(first)!.via ?? []).map(String), [...seen, first]);
    const chain = [...before, ...via];
    const repeated = chain.find((hop, i) => hop === id || chain.indexOf(hop) !== i || seen.includes(hop));
    if (repeated) throw new RouteError(`via: ${nameOf(known, repeated)} would be passed twice on the way (a cycle)`);
    if (chain.length > MAX_HOPS) throw new RouteError(`via: the chain of jump hosts would be ${chain.length} long; at most ${MAX_HOPS}`);
    return chain;
  };
  const chain = await expand(server.id, server.via, [server.id]);
  return chain.map((id) => known.get(id)!);
}

const nameOf = (known: Map<string, RouteServer>, id: string) => {
  const server = known.get(id);
  return server ? `"${server.title}" (${id})` : `server ${id}`;
};

/** A server's `via` as a change would leave it (and its title, for a server not stored yet). */
export interface PlannedVia {
  title: string;
  via: readonly string[];
}

const isObjectId = (id: string) => Types.ObjectId.isValid(id) && String(new Types.ObjectId(id)) === id;

/**
 * Hops looked up among an organization's servers only (a server of another organization does not
 * exist here), as `planned` changes would leave them; a planned server not stored yet is its plan.
 */
const hopsByIdIn = (organizationId: string, planned: ReadonlyMap<string, PlannedVia>) => async (ids: string[]) => {
  const found = await ServerModel.find({ _id: { $in: ids.filter(isObjectId) }, organization_id: organizationId }, HOP_FIELDS).lean<RouteServer[]>();
  const hops = new Map(found.map((hop) => [String(hop._id), hop]));
  for (const id of ids) {
    const change = planned.get(id);
    if (!change) continue;
    const base = hops.get(id) ?? { _id: new Types.ObjectId(id), host: '', port: 0, username: '', host_key_fingerprint: null };
    hops.set(id, { ...base, title: change.title, via: change.via.map((hop) => new Types.ObjectId(hop)) });
  }
  return hops;
};

/**
 * The jump-host rules for planned changes of servers' `via` (a new server's, a PATCH's, an import's):
 * each planned server's route, and the route of every server behind one of them (its route starts
 * with theirs), as the changes would leave them. Returns the planned servers' routes; throws
 * RouteError, its `serverId` the planned server whose change breaks a route.
 */
export async function checkPlannedRoutes(organizationId: string, planned: ReadonlyMap<string, PlannedVia>): Promise<Map<string, RouteServer[]>> {
  const load = hopsByIdIn(organizationId, planned);
  const blame = (serverId: string) => (error: unknown): never => {
    if (error instanceof RouteError) error.serverId ??= serverId;
    throw error;
  };
  const routes = new Map<string, RouteServer[]>();
  for (const [id, { via }] of planned) routes.set(id, await routeOf({ id, via }, load).catch(blame(id)));
  // Each server behind, with the planned server its route goes through.
  let behind = new Map([...planned.keys()].map((id) => [id, id]));
  for (let depth = 0; behind.size && depth < MAX_HOPS; depth += 1) {
    const next = await ServerModel.find({ organization_id: organizationId, 'via.0': { $in: [...behind.keys()].map((id) => new Types.ObjectId(id)) } }, { via: 1 }).lean();
    const unplanned = next.filter((server) => !planned.has(String(server._id)));
    const roots = new Map(unplanned.map((server) => [String(server._id), behind.get(String(server.via![0]))!]));
    for (const server of unplanned) await routeOf({ id: String(server._id), via: (server.via ?? []).map(String) }, load).catch(blame(roots.get(String(server._id))!));
    behind = roots;
  }
  return routes;
}

/** Servers whose `via` names this one: deleting it would leave them unreachable. */
export function serversBehind(organizationId: string, serverId: Types.ObjectId) {
  return ServerModel.find({ organization_id: organizationId, via: serverId }, { title: 1 }).lean<Array<{ _id: Types.ObjectId; title: string }>>();
}
