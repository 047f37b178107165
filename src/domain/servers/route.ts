import { Types } from 'mongoose';
import { ServerModel } from './model';

/** The most jump hosts between Bosun and a server. */
export const MAX_HOPS = 4;

/** What is wrong with a server's `via`: refused (422) when set, a failure no retry fixes when met at connection time. */
export class RouteError extends Error {
  override name = 'RouteError';
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
export async function routeOf(
  server: { id: string; organizationId: string; via: readonly string[] },
  load: (ids: string[]) => Promise<Map<string, RouteServer>> = hopsByIdIn(server.organizationId),
): Promise<RouteServer[]> {
  const known = new Map<string, RouteServer>();
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

/** Hops looked up among an organization's servers only: a server of another organization does not exist here. */
const hopsByIdIn = (organizationId: string) => async (ids: string[]) => {
  const valid = ids.filter((id) => Types.ObjectId.isValid(id) && String(new Types.ObjectId(id)) === id);
  const found = await ServerModel.find({ _id: { $in: valid }, organization_id: organizationId }, HOP_FIELDS).lean<RouteServer[]>();
  return new Map(found.map((hop) => [String(hop._id), hop]));
};

/** Servers whose `via` names this one: deleting it would leave them unreachable. */
export function serversBehind(organizationId: string, serverId: Types.ObjectId) {
  return ServerModel.find({ organization_id: organizationId, via: serverId }, { title: 1 }).lean<Array<{ _id: Types.ObjectId; title: string }>>();
}
