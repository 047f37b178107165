import { Types } from 'mongoose';
import type { Action } from '../../../domain/access/roles';
import { coversAllServers, deniedServers, readableServers, targetLimitMet, type Context, type ServerRef } from '../../../domain/access/grants';
import type { Principal } from '../../../domain/tokens/service';
import { ServerModel } from '../../../domain/servers/model';
import { refusal } from './refusals';

/*
 * The gate's questions about servers: may the caller do an action on these servers (naming those it
 * may not), is a server (or the servers of a resource) its business at all, and which it may read.
 */

export type NamedServer = ServerRef & { title?: string | null };

const nameOf = (server: NamedServer) => (server.title ? `${server.title} (${String(server._id)})` : String(server._id));

/**
 * Refuses (403, naming them) a request whose `servers` are not all within the caller's grants for
 * `action`, or which touches more servers than its grants allow per run.
 */
export function assertOnServers(principal: Principal, action: Action, servers: readonly NamedServer[], context: Context = {}): void {
  const count = context.targetCount ?? servers.length;
  const limit = targetLimitMet(principal, action, count, context);
  if (limit !== null) {
    throw refusal('forbidden', `${principal.identity.name} may touch at most ${limit} server(s) per run with "${action}"; this touches ${count}`);
  }
  const denied = deniedServers(principal, action, servers, context);
  if (denied.length) {
    throw refusal('forbidden', `${principal.identity.name} may not "${action}" on ${denied.length === 1 ? 'server' : 'servers'} ${denied.map(nameOf).join(', ')}`,
      denied.map((s) => ({ path: `servers/${String(s._id)}`, message: `outside the role bindings of ${principal.identity.name} for "${action}"` })),
    );
  }
}

/**
 * A server is the caller's business when it may read it, or do `action` on it; otherwise it is a
 * 404, as another organization's is. Readable but `action` not allowed: 403 naming it.
 */
export function checkServer<S extends NamedServer>(principal: Principal, server: S | null, action: Action = 'read'): S {
  if (!server) throw refusal('hidden', 'Server');
  if (!deniedServers(principal, action, [server]).length) return server;
  if (action === 'read' || deniedServers(principal, 'read', [server]).length) throw refusal('hidden', 'Server');
  assertOnServers(principal, action, [server]);
  return server;
}

/** The servers among `servers` the caller may read (those it may not look like none, as another organization's). */
export function readableAmong<S extends ServerRef>(principal: Principal, servers: readonly S[]): S[] {
  const denied = new Set(deniedServers(principal, 'read', servers));
  return servers.filter((server) => !denied.has(server));
}

/** A MongoDB filter on servers for a list: the organization's, and those the caller may read. */
export function readableServerFilter(principal: Principal): Record<string, unknown> {
  const readable = readableServers(principal);
  return { organization_id: new Types.ObjectId(principal.organizationId), ...(readable ? { $and: [readable] } : {}) };
}

/**
 * The servers a resource works on (a conversation's, a migration plan's), by id: the resource is a
 * 404 (`what`) unless the caller may read them all or do `action` on them all; readable but not
 * allowed, 403 naming them.
 */
export async function checkServersOf(principal: Principal, ids: readonly (Types.ObjectId | string | null | undefined)[], what: string, action: Action = 'read') {
  const wanted = ids.filter((id): id is Types.ObjectId | string => !!id);
  const context = { targetCount: wanted.length };
  if (coversAllServers(principal, action, context)) return;
  const servers = await ServerModel.find({ _id: { $in: wanted }, organization_id: principal.organizationId }, { title: 1, tags: 1 }).lean();
  if (!deniedServers(principal, action, servers, context).length) return;
  if (action === 'read' || deniedServers(principal, 'read', servers).length) throw refusal('hidden', what);
  assertOnServers(principal, action, servers, context);
}

/** The ids of the servers the caller may read, or null when it may read them all (for filters on what refers to servers). */
export async function readableServerIds(principal: Principal): Promise<Types.ObjectId[] | null> {
  if (coversAllServers(principal, 'read')) return null;
  return (await ServerModel.find(readableServerFilter(principal), { _id: 1 }).lean()).map((s) => s._id);
}
