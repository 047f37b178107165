import { hasScope } from './scopes';
import type { Types } from 'mongoose';
import type { Action, Role } from './roles';

/**
 * A role binding made ready to answer "may this identity do this action on these servers?" many
 * times: its actions as a set, its limits as they are checked.
 */
export interface Grant {
  role: Role;
  actions: ReadonlySet<Action>;
  /** null: every server; otherwise the servers having all of these tags. */
  tags: readonly string[] | null;
  /** null: every deployment; otherwise these ids. */
  deployments: ReadonlySet<string> | null;
  maxTargets: number | null;
}

/** What one request may do: its identity's grants, narrowed by its token's scopes. */
export interface Access {
  grants: readonly Grant[];
  /** The token's scopes; `admin` narrows nothing. */
  scopes: readonly string[];
}

export interface ServerRef {
  _id: Types.ObjectId | string;
  tags?: readonly string[] | null;
}

/** What a request is about: a deployment (its bindings apply) and how many servers it touches. */
export interface Context {
  deploymentId?: string;
  targetCount?: number;
}

const scopeAllows = (access: Access, action: Action) => hasScope(access.scopes, action);

/** The grants that may apply to `action` in `context`, before looking at any server's tags. */
function applicable(access: Access, action: Action, context: Context): Grant[] {
  if (!scopeAllows(access, action)) return [];
  return access.grants.filter(
    (g) =>
      g.actions.has(action) &&
      (g.deployments === null || (context.deploymentId !== undefined && g.deployments.has(context.deploymentId))) &&
      // A limit on servers per run limits what runs, not what is read.
      (g.maxTargets === null || action === 'read' || (context.targetCount ?? 1) <= g.maxTargets),
  );
}

const hasAllTags = (server: ServerRef, tags: readonly string[]) => {
  const own = server.tags ?? [];
  return tags.every((tag) => own.includes(tag));
};

/** May the request do `action` somewhere (the coarse check a route makes before looking anything up)? */
export const mayAtAll = (access: Access, action: Action) => scopeAllows(access, action) && access.grants.some((g) => g.actions.has(action));

/** May it do `action` on everything, whatever the server or deployment (organization settings, people, tokens)? */
export const mayEverywhere = (access: Access, action: Action) =>
  scopeAllows(access, action) && access.grants.some((g) => g.actions.has(action) && g.tags === null && g.deployments === null && g.maxTargets === null);

/** Does some grant allow `action` in `context` on every server, whatever its tags (no need to look them up)? */
export const coversAllServers = (access: Access, action: Action, context: Context = {}) => applicable(access, action, context).some((g) => g.tags === null);

/** The servers among `servers` that no applicable grant covers (empty: the request is allowed on all of them). */
export function deniedServers<S extends ServerRef>(access: Access, action: Action, servers: readonly S[], context: Context = {}): S[] {
  const grants = applicable(access, action, { ...context, targetCount: context.targetCount ?? servers.length });
  if (grants.some((g) => g.tags === null)) return [];
  const tagged = grants.map((g) => g.tags as readonly string[]);
  return servers.filter((server) => !tagged.some((tags) => hasAllTags(server, tags)));
}

/** May the request do `action` on a deployment that touches no server now (or before its servers are known)? */
export const mayOnDeployment = (access: Access, action: Action, deploymentId: string) =>
  applicable(access, action, { deploymentId, targetCount: 0 }).length > 0;

/** Why a request touching `count` servers is refused when grants would allow it on fewer: the smallest limit it met, or null. */
export function targetLimitMet(access: Access, action: Action, count: number, context: Context = {}): number | null {
  if (applicable(access, action, { ...context, targetCount: count }).length > 0) return null;
  const limits = applicable(access, action, { ...context, targetCount: 1 }).flatMap((g) => (g.maxTargets === null ? [] : [g.maxTargets]));
  return limits.length ? Math.max(...limits) : null;
}

/**
 * The MongoDB filter on servers that keeps those the request may read (outside a deployment), or
 * null when it may read them all.
 */
export function readableServers(access: Access): Record<string, unknown> | null {
  const grants = applicable(access, 'read', { targetCount: 1 });
  if (grants.some((g) => g.tags === null)) return null;
  const tagged = grants.map((g) => g.tags as readonly string[]);
  return tagged.length ? { $or: tagged.map((tags) => ({ tags: { $all: tags } })) } : { _id: { $in: [] } };
}

/**
 * May the request do `action` on a deployment whose targets are now `servers`? Every one of them must
 * be covered; a deployment that targets none needs a grant that could apply to it at all.
 */
export function mayOnDeploymentTargets(access: Access, action: Action, deploymentId: string, servers: readonly ServerRef[]): boolean {
  return servers.length === 0 ? mayOnDeployment(access, action, deploymentId) : deniedServers(access, action, servers, { deploymentId }).length === 0;
}

/**
 * May the request see a deployment whose targets are now `servers`? When some of them are its to
 * read (a shared deployment shows, and a trigger then names the servers it may not touch), or the
 * deployment by name.
 */
export function mayReadDeployment(access: Access, deploymentId: string, servers: readonly ServerRef[]): boolean {
  if (servers.length === 0) return mayOnDeployment(access, 'read', deploymentId);
  return deniedServers(access, 'read', servers, { deploymentId }).length < servers.length;
}
