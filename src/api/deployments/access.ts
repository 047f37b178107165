import { Types } from 'mongoose';
import { coversAllServers, deniedServers, mayOnDeploymentTargets, mayReadDeployment, type ServerRef } from '../../domain/access/grants';
import { DeploymentModel } from '../../domain/deployments/model';
import type { Action } from '../../domain/access/roles';
import type { Deployment } from '../../domain/deployments/model';
import { ServerModel } from '../../domain/servers/model';
import { selectedByTags } from '../../domain/servers/quarantine';
import type { Principal } from '../../domain/tokens/service';
import { assertOnServers } from '../access/gate';
import { ApiError, notFound } from '../http/errors';
import { resolveTargets } from './targets';

type Targets = Pick<Deployment, '_id' | 'organization_id' | 'server_id' | 'targets'>;

/**
 * A deployment is the caller's business when it may read some of the servers it targets now (or the
 * deployment by name), or do `action` on all of them (a token that may only trigger still finds what
 * it triggers); otherwise it is a 404, as another organization's. `action` needs every server
 * covered: seen but not allowed, 403 naming the others.
 */
export async function checkDeployment(principal: Principal, deployment: Targets, action: Action = 'read'): Promise<void> {
  const deploymentId = deployment._id.toString();
  if (coversAllServers(principal, action, { deploymentId, targetCount: 1 })) return;
  const servers = await resolveTargets(deployment);
  if (action === 'read' ? mayReadDeployment(principal, deploymentId, servers) : mayOnDeploymentTargets(principal, action, deploymentId, servers)) return;
  if (action === 'read' || !mayReadDeployment(principal, deploymentId, servers)) throw notFound('Deployment');
  assertOnServers(principal, action, servers, { deploymentId, targetCount: 1 });
  throw new ApiError('forbidden', `${principal.identity.name} may not "${action}" on this deployment`);
}

/**
 * Before a run is created: `deployments:run` on each server it will touch, and no more servers than
 * the caller's grants allow per run (403 naming them; nothing is stored).
 */
export async function checkRunTargets(principal: Principal, deploymentId: string, servers: readonly (ServerRef & { title?: string | null })[]): Promise<void> {
  const context = { deploymentId, targetCount: servers.length };
  if (coversAllServers(principal, 'deployments:run', context)) return;
  const known = servers.every((s) => s.tags !== undefined)
    ? servers
    : await ServerModel.find({ _id: { $in: servers.map((s) => s._id) } }, { title: 1, tags: 1 }).lean();
  assertOnServers(principal, 'deployments:run', known.length === servers.length ? known : servers, context);
}

/** The servers of the organization a set of targets (a definition being written) would select now, with their tags. */
export const serversOfDefinition = (organizationId: string, input: { server_id?: string | null; targets?: { server_ids?: string[]; tags?: string[] } | null }) =>
  resolveTargets({ organization_id: organizationId as never, server_id: (input.server_id ?? null) as never, targets: (input.targets ?? null) as never });

/**
 * The MongoDB filter of a deployment list: the organization's, and when the caller's grants are
 * limited, those it may read (judged on every deployment's targets now, in memory: one query for
 * the definitions, one for the servers' tags).
 */
export async function readableDeploymentFilter(principal: Principal): Promise<Record<string, unknown>> {
  const organization_id = new Types.ObjectId(principal.organizationId);
  if (coversAllServers(principal, 'read')) return { organization_id };
  const [definitions, servers] = await Promise.all([
    DeploymentModel.find({ organization_id }, { server_id: 1, targets: 1 }).lean(),
    ServerModel.find({ organization_id }, { tags: 1 }).lean(),
  ]);
  const byId = new Map(servers.map((s) => [s._id.toString(), s]));
  const targetsOf = (d: (typeof definitions)[number]) => {
    if (d.server_id) return byId.has(d.server_id.toString()) ? [byId.get(d.server_id.toString())!] : [];
    const ids = new Set((d.targets?.server_ids ?? []).map(String));
    const tags = d.targets?.tags ?? [];
    return servers.filter((s) => ids.has(s._id.toString()) || selectedByTags(s.tags, tags));
  };
  const readable = definitions.filter((d) => mayReadDeployment(principal, d._id.toString(), targetsOf(d)));
  return { organization_id, _id: { $in: readable.map((d) => d._id) } };
}

/** One server's part of a run of a deployment the caller sees: a 404 unless the caller may read that server. */
export async function checkTargetServer(principal: Principal, deploymentId: string, serverId: string): Promise<void> {
  if (coversAllServers(principal, 'read', { deploymentId })) return;
  const server = await ServerModel.findById(serverId, { tags: 1 }).lean();
  if (!server || deniedServers(principal, 'read', [server], { deploymentId }).length) throw notFound('Target');
}
