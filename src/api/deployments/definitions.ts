import { Types } from 'mongoose';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import { createDeployment, deleteDeployment, redefineDeployment } from '../../domain/deployments/store';
import { lastRunsOf } from '../../domain/deployments/runs';
import { deleteSchedulesOf, managedSchedulesOf } from '../../domain/schedules/store';
import { pipelinesUsing } from '../../domain/pipelines/store';
import { DeploymentModel, DeploymentRunModel, UNFINISHED_RUN_STATUSES, type Deployment } from '../../domain/deployments/model';
import { resolveParameters, type ParameterValue } from '../../domain/deployments/parameters';
import type { CreateDeploymentInput, UpdateDeploymentInput } from './schemas';
import { toDeploymentListView, toDeploymentView } from './views/deployments';
import { isDuplicateKey } from '../../domain/database';
import type { Action } from '../../domain/access/roles';
import type { Principal } from '../../domain/tokens/service';
import { assertOnServers, checkDeployment, readableAmong, readableDeploymentFilter } from '../access/gate';
import { resolveTargets, serversOfDefinition } from './targets';
import { freezeNotices } from '../servers/freeze-notices';
import { checkOwnedWith, checkOwnership } from '../ownership/guard';

/** A deployment's view: its last run as its runs list gives it, its one server's title and the freezes on its targets now or soon. */
async function fullView(d: Deployment) {
  const [last, targets] = await Promise.all([lastRunsOf([d._id]), resolveTargets(d)]);
  const serverTitle = d.server_id ? (targets[0]?.title ?? null) : null;
  return toDeploymentView(d, { last: last.get(d._id.toString()), serverTitle, freezes: await freezeNotices(d.organization_id.toString(), targets) });
}

/** The titles of the one-server deployments' servers, by server id. */
async function serverTitlesOf(deployments: readonly Deployment[]): Promise<Map<string, string>> {
  const ids = deployments.flatMap((d) => (d.server_id ? [d.server_id] : []));
  if (!ids.length) return new Map();
  const servers = await ServerModel.find({ _id: { $in: ids } }, { title: 1 }).lean();
  return new Map(servers.map((s) => [s._id.toString(), s.title]));
}

/** A deployment the caller may read (404 otherwise) and do `action` on (403 otherwise). */
export type FindDeployment = (principal: Principal, id: string, action?: Action) => Promise<Deployment>;

/**
 * Deployments looked up through `byId` (the admission's, shared by the requests of the same moment);
 * another organization's, or one outside the caller's grants, is a 404 like none.
 */
export const deploymentFinder =
  (byId: (id: Types.ObjectId) => Promise<Deployment | null>): FindDeployment =>
  async (principal, id, action = 'read') => {
    const deployment = await byId(parseId(id, 'Deployment'));
    if (!deployment || deployment.organization_id.toString() !== principal.organizationId) throw notFound('Deployment');
    await checkDeployment(principal, deployment._id.toString(), () => resolveTargets(deployment), action);
    return deployment;
  };

/** The parameters a trigger runs with, or a 422 naming each problem. */
export function parametersFor(deployment: Deployment, given: Record<string, string>): ParameterValue[] {
  const { values, problems } = resolveParameters(deployment.parameters ?? [], given);
  if (problems.length) throw new ApiError('validation_failed', 'The parameters are invalid', problems);
  return values;
}

/** Deployments' definitions: list, read, create, change, delete. */
export function deploymentDefinitions(findDeployment: FindDeployment, schedulesDeleted: (ids: string[]) => Promise<void>) {
  /** The server must exist in the caller's organization; another organization's, or one the caller may not read, looks like none. */
  async function checkServers(principal: Principal, serverIds: string[], path: string) {
    const ids = [...new Set(serverIds)];
    const servers = await ServerModel.find({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) }, organization_id: principal.organizationId }, { tags: 1 }).lean();
    if (readableAmong(principal, servers).length !== ids.length) throw new ApiError('validation_failed', 'The request body is invalid', [{ path, message: ids.length > 1 ? 'Some of these servers do not exist' : 'No such server' }]);
  }
  const checkTargets = async (principal: Principal, input: { server_id?: string; targets?: { server_ids?: string[] } }) => {
    if (input.server_id) await checkServers(principal, [input.server_id], 'server_id');
    if (input.targets?.server_ids?.length) await checkServers(principal, input.targets.server_ids, 'targets.server_ids');
  };

  const duplicateName = (name: string) => new ApiError('conflict', `A deployment named "${name}" already exists in this organization`);

  return {
    /** The deployments the caller may read. */
    async list(principal: Principal, page: PageQuery) {
      const listed = await findPage(DeploymentModel, await readableDeploymentFilter(principal), page, (d: Deployment) => d);
      const [last, titles] = await Promise.all([lastRunsOf(listed.data.map((d) => d._id)), serverTitlesOf(listed.data)]);
      return { ...listed, data: listed.data.map((d) => toDeploymentListView(d, last.get(d._id.toString()), titles.get(String(d.server_id)) ?? null)) };
    },

    async get(principal: Principal, id: string) {
      return fullView(await findDeployment(principal, id));
    },

    async create(principal: Principal, input: CreateDeploymentInput) {
      const { organizationId } = principal;
      await checkTargets(principal, input);
      assertOnServers(principal, 'deployments:write', await serversOfDefinition(organizationId, input));
      try {
        return await fullView(await createDeployment(organizationId, input));
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name);
        throw error;
      }
    },

    /** Changes apply to runs triggered afterwards; a run keeps the steps it was triggered with. */
    async update(principal: Principal, id: string, { force = false, ...input }: UpdateDeploymentInput) {
      const { organizationId } = principal;
      const deployment = await findDeployment(principal, id, 'deployments:write');
      const forced = checkOwnership(principal, { kind: 'Deployment', name: deployment.name, managedBy: deployment.managed_by }, { force });
      await checkTargets(principal, input);
      // Not pointed at servers out of the caller's reach either.
      if (input.server_id || input.targets) assertOnServers(principal, 'deployments:write', await serversOfDefinition(organizationId, input), { deploymentId: id });
      if (input.strategy && (input.server_id ?? (!input.targets && deployment.server_id))) {
        throw new ApiError('validation_failed', 'The request body is invalid', [{ path: 'strategy', message: 'strategy applies to targets, not to one server_id' }]);
      }
      if (input.rollback && (input.server_id ?? (!input.targets && deployment.server_id))) {
        throw new ApiError('validation_failed', 'The request body is invalid', [{ path: 'rollback', message: 'rollback applies to targets (a fleet run), not to one server_id' }]);
      }
      try {
        return await fullView((await redefineDeployment(deployment._id, input, forced))!);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name!);
        throw error;
      }
    },

    /** Deletes the definition and its run history; refused while a run is queued or running, or a pipeline's stage runs it. */
    async remove(principal: Principal, id: string, force = false) {
      const deployment = await findDeployment(principal, id, 'deployments:write');
      checkOwnership(principal, { kind: 'Deployment', name: deployment.name, managedBy: deployment.managed_by }, { force, deleting: true });
      if (await DeploymentRunModel.exists({ deployment_id: deployment._id, status: { $in: UNFINISHED_RUN_STATUSES } })) {
        throw new ApiError('conflict', 'This deployment has a queued or running run: cancel it first');
      }
      const pipelines = await pipelinesUsing(deployment._id);
      if (pipelines.length) {
        const named = pipelines.map((name) => `"${name}"`).join(', ');
        throw new ApiError('conflict', pipelines.length === 1 ? `Pipeline ${named} runs this deployment in a stage: change or delete it first` : `Pipelines ${named} run this deployment in their stages: change or delete them first`);
      }
      // Its schedules go with it: their documents, then their Temporal Schedules (the worker's reconcile removes any left).
      checkOwnedWith(principal, await managedSchedulesOf({ deployment_id: deployment._id }), { force });
      const schedules = await deleteSchedulesOf({ deployment_id: deployment._id });
      await deleteDeployment(deployment._id);
      await schedulesDeleted(schedules).catch(() => undefined);
    },
  };
}
