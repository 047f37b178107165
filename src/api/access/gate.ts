import type { RequestHandler } from 'express';
import type { Action } from '../../domain/access/roles';
import { Types } from 'mongoose';
import { coversAllServers, deniedServers, mayAtAll, mayEverywhere, readableServers, targetLimitMet, type Context, type ServerRef } from '../../domain/access/grants';
import type { Principal } from '../../domain/tokens/service';
import { hasScope } from '../../domain/tokens/scopes';
import { ServerModel } from '../../domain/servers/model';
import { principalOf } from '../http/auth';
import { ApiError, notFound } from '../http/errors';

/*
 * The one gate: every route asks here whether its caller may act, before anything is stored or
 * started. A route first checks that the caller may do the action somewhere; the service then
 * checks the servers and deployment the request touches (assertOnServers) and filters lists by the
 * same grants, so a client of any kind (API, CLI, console) meets the same answer.
 */

const refusalOf = (principal: Principal, action: Action) =>
  hasScope(principal.scopes, action)
    ? `${principal.identity.name} has no role that allows "${action}"`
    : `This token lacks the "${action}" scope`;

/** The caller may do `action` on some server or deployment (the rest is checked where the request says which). */
export const requireAction =
  (action: Action): RequestHandler =>
  (req, _res, next) => {
    const principal = principalOf(req);
    if (!mayAtAll(principal, action)) throw new ApiError('forbidden', refusalOf(principal, action));
    next();
  };

/** The caller may do `action` organization-wide, unlimited (people, tokens, settings, secrets). */
export const requireEverywhere =
  (action: Action): RequestHandler =>
  (req, _res, next) => {
    const principal = principalOf(req);
    if (!mayEverywhere(principal, action)) {
      throw new ApiError('forbidden', mayAtAll(principal, action) ? `"${action}" here needs a role binding for the whole organization` : refusalOf(principal, action));
    }
    next();
  };

const nameOf = (server: ServerRef & { title?: string | null }) => (server.title ? `${server.title} (${String(server._id)})` : String(server._id));

/**
 * Refuses (403, naming them) a request whose `servers` are not all within the caller's grants for
 * `action`, or which touches more servers than its grants allow per run.
 */
export function assertOnServers(principal: Principal, action: Action, servers: readonly (ServerRef & { title?: string | null })[], context: Context = {}): void {
  const count = context.targetCount ?? servers.length;
  const limit = targetLimitMet(principal, action, count, context);
  if (limit !== null) {
    throw new ApiError('forbidden', `${principal.identity.name} may touch at most ${limit} server(s) per run with "${action}"; this touches ${count}`);
  }
  const denied = deniedServers(principal, action, servers, context);
  if (denied.length) {
    throw new ApiError('forbidden', `${principal.identity.name} may not "${action}" on ${denied.length === 1 ? 'server' : 'servers'} ${denied.map(nameOf).join(', ')}`, 
      denied.map((s) => ({ path: `servers/${String(s._id)}`, message: `outside the role bindings of ${principal.identity.name} for "${action}"` })),
    );
  }
}

/**
 * A server is the caller's business when it may read it, or do `action` on it; otherwise it is a
 * 404, as another organization's is. Readable but `action` not allowed: 403 naming it.
 */
export function checkServer<S extends ServerRef & { title?: string | null }>(principal: Principal, server: S | null, action: Action = 'read'): S {
  if (!server) throw notFound('Server');
  if (!deniedServers(principal, action, [server]).length) return server;
  if (action === 'read' || deniedServers(principal, 'read', [server]).length) throw notFound('Server');
  assertOnServers(principal, action, [server]);
  return server;
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
  if (action === 'read' || deniedServers(principal, 'read', servers).length) throw notFound(what);
  assertOnServers(principal, action, servers, context);
}

/** The ids of the servers the caller may read, or null when it may read them all (for filters on what refers to servers). */
export async function readableServerIds(principal: Principal): Promise<Types.ObjectId[] | null> {
  if (coversAllServers(principal, 'read')) return null;
  return (await ServerModel.find(readableServerFilter(principal), { _id: 1 }).lean()).map((s) => s._id);
}
