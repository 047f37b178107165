import { Types } from 'mongoose';
import { coversAllServers, deniedServers, mayOnDeploymentTargets, mayReadDeployment, type Access, type Context } from '../../../domain/access/grants';
import type { Action } from '../../../domain/access/roles';
import { DeploymentModel } from '../../../domain/deployments/model';
import { ServerModel } from '../../../domain/servers/model';
import { selectedByTags } from '../../../domain/servers/quarantine';
import type { Principal } from '../../../domain/tokens/service';
import { refusal } from './refusals';
import { assertOnServers, type NamedServer } from './servers';

/*
 * The gate's questions about deployments and their runs: is a deployment (or one server's part of a
 * run) the caller's business, may it do an action on what a deployment or a run touches, and which
 * deployments a list shows. A deployment's bindings apply (`deployments` of a role binding).
 */

/**
 * A deployment is the caller's business when it may read some of the servers it targets now
 * (`targets`, looked up only when the grants do not answer alone) or the deployment by name, or do
 * `action` on all of them (a token that may only trigger still finds what it triggers); otherwise it
 * is a 404, as another organization's. `action` needs every server covered: seen but not allowed,
 * 403 naming the others.
 */
export async function checkDeployment(principal: Principal, deploymentId: string, targets: () => Promise<readonly NamedServer[]>, action: Action = 'read'): Promise<void> {
  if (coversAllServers(principal, action, { deploymentId, targetCount: 1 })) return;
  const servers = await targets();
  if (action === 'read' ? mayReadDeployment(principal, deploymentId, servers) : mayOnDeploymentTargets(principal, action, deploymentId, servers)) return;
  if (action === 'read' || !mayReadDeployment(principal, deploymentId, servers)) throw refusal('hidden', 'Deployment');
  assertOnServers(principal, action, servers, { deploymentId, targetCount: 1 });
  throw refusal('forbidden', `${principal.identity.name} may not "${action}" on this deployment`);
}

/**
 * Before a run is created: `deployments:run` on each server it will touch, and no more servers than
 * the caller's grants allow per run (403 naming them; nothing is stored).
 */
export async function checkRunTargets(principal: Principal, deploymentId: string, servers: readonly NamedServer[]): Promise<void> {
  const context = { deploymentId, targetCount: servers.length };
  if (coversAllServers(principal, 'deployments:run', context)) return;
  const known = servers.every((s) => s.tags !== undefined)
    ? servers
    : await ServerModel.find({ _id: { $in: servers.map((s) => s._id) } }, { title: 1, tags: 1 }).lean();
  assertOnServers(principal, 'deployments:run', known.length === servers.length ? known : servers, context);
}

/**
 * A decision on a run (a gate's, a pause, a rollback): `action` on every server the run touches
 * (`serverIds`: its targets, not the deployment's), 403 naming the others.
 */
export async function assertOnRunServers(principal: Principal, deploymentId: string, serverIds: readonly (Types.ObjectId | null | undefined)[], action: Action): Promise<void> {
  const context = { deploymentId, targetCount: serverIds.length };
  if (coversAllServers(principal, action, context)) return;
  assertOnServers(principal, action, await runServers(serverIds), context);
}

/** The servers a run touches, with their tags; a server deleted since has none, so only a binding on every server covers it. */
export async function runServers(serverIds: readonly (Types.ObjectId | null | undefined)[]): Promise<NamedServer[]> {
  const servers = await ServerModel.find({ _id: { $in: serverIds } }, { title: 1, tags: 1 }).lean();
  const known = new Set(servers.map((s) => s._id.toString()));
  return [...servers, ...serverIds.filter((id) => !known.has(String(id))).map((id) => ({ _id: id!, tags: [] as string[] }))];
}

/** May `access` do `action` on every server of a run (`servers`, `context` as assertOnRunServers asks them)? */
export const mayOnRunServers = (access: Access, action: Action, servers: readonly NamedServer[], context: Context) =>
  coversAllServers(access, action, context) || deniedServers(access, action, servers, context).length === 0;

/**
 * Whether the caller is one who may approve a run's gate, as `assertMayDecideGate` and
 * `assertOnRunServers` would judge it: a person, with `approve` on every server the run touches
 * (what waits for a person's approval is listed by this answer).
 */
export async function mayApproveRun(principal: Principal, deploymentId: string, serverIds: readonly (Types.ObjectId | null | undefined)[]): Promise<boolean> {
  if (principal.identity.type !== 'person') return false;
  const context = { deploymentId, targetCount: serverIds.length };
  return coversAllServers(principal, 'approve', context) || mayOnRunServers(principal, 'approve', await runServers(serverIds), context);
}

/**
 * The deployments of the organization the caller may read, or null when it may read them all
 * (judged on every deployment's targets now, in memory: one query for the definitions, one for the
 * servers' tags).
 */
export async function readableDeploymentIds(principal: Principal): Promise<Types.ObjectId[] | null> {
  if (coversAllServers(principal, 'read')) return null;
  const organization_id = new Types.ObjectId(principal.organizationId);
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
  return definitions.filter((d) => mayReadDeployment(principal, d._id.toString(), targetsOf(d))).map((d) => d._id);
}

/** The MongoDB filter of a deployment list: the organization's, and when the caller's grants are limited, those it may read. */
export async function readableDeploymentFilter(principal: Principal): Promise<Record<string, unknown>> {
  const organization_id = new Types.ObjectId(principal.organizationId);
  const readable = await readableDeploymentIds(principal);
  return readable ? { organization_id, _id: { $in: readable } } : { organization_id };
}

/** One server's part of a run of a deployment the caller sees: a 404 unless the caller may read that server. */
export async function checkTargetServer(principal: Principal, deploymentId: string, serverId: string): Promise<void> {
  if (coversAllServers(principal, 'read', { deploymentId })) return;
  const server = await ServerModel.findById(serverId, { tags: 1 }).lean();
  if (!server || deniedServers(principal, 'read', [server], { deploymentId }).length) throw refusal('hidden', 'Target');
}
