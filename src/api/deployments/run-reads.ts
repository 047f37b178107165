import { stepLogLocation } from '../logs/step-log';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import type { UiLinks } from '../../domain/temporal/client';
import { targetCounts } from '../../domain/deployments/targets';
import { DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import { ownRunsOf } from '../../domain/deployments/runs';
import { toRunListView, toRunView } from './views/runs';
import { toTargetDetailView } from './views/targets';
import type { FindDeployment } from './definitions';
import { approversOf, checkTargetServer } from '../access/gate';
import type { Action } from '../../domain/access/roles';
import type { Principal } from '../../domain/tokens/service';

/**
 * Reading runs as the API shows them: the one place a run's view is built, for the HTTP routes and
 * for the live subscription's snapshot alike.
 */
export function createRunReads({ links, findDeployment }: { links: Pick<UiLinks, 'run'>; findDeployment: FindDeployment }) {
  /** A run (never a fleet run's target: those are read through their run). */
  async function findRun(principal: Principal, deploymentId: string, runId: string, action: Action = 'read') {
    const deployment = await findDeployment(principal, deploymentId, action);
    const run = await DeploymentRunModel.findOne({
      _id: parseId(runId, 'Run'),
      deployment_id: deployment._id,
      organization_id: principal.organizationId,
      parent_run_id: null,
    }).lean<DeploymentRun>();
    if (!run) throw notFound('Run');
    return run;
  }

  /** One server's part of a run: a fleet run's target document, or a one-server run itself (its only target). */
  async function findTarget(run: DeploymentRun, serverId: string): Promise<DeploymentRun> {
    const server = parseId(serverId, 'Target');
    const target = !run.fleet
      ? String(run.server_id) === server.toString()
        ? run
        : null
      : await DeploymentRunModel.findOne({ parent_run_id: run._id, server_id: server }).lean<DeploymentRun>();
    if (!target) throw notFound('Target');
    return target;
  }

  /** A fleet run's targets, without their steps' output, in batch order. */
  const targetsOf = (run: DeploymentRun) =>
    run.fleet
      ? DeploymentRunModel.find({ parent_run_id: run._id }, { 'steps.output': 0, 'steps.command': 0, parameters: 0 }).sort({ batch: 1, _id: 1 }).lean<DeploymentRun[]>()
      : Promise.resolve([]);
  const serverOf = (run: DeploymentRun) => (run.server_id ? ServerModel.findById(run.server_id, { title: 1, host: 1 }).lean() : Promise.resolve(null));

  /** A fleet run's rollback runs, once it rolled back (without their steps' output). */
  const rollbacksOf = (run: DeploymentRun) =>
    run.rollback ? DeploymentRunModel.find({ 'rolls_back.run_id': run._id }, { 'steps.output': 0, 'steps.command': 0, parameters: 0 }).lean<DeploymentRun[]>() : Promise.resolve([]);

  /** A run as the API shows it, with its workflow's page in the Temporal UI when TEMPORAL_UI_URL is set. */
  const runView = async (run: DeploymentRun) => {
    const [targets, server, rollbacks] = await Promise.all([targetsOf(run), serverOf(run), rollbacksOf(run)]);
    const approvers = run.status === 'awaiting_approval' ? await approversOf(run, targets.map((t) => t.server_id!)) : null;
    return { ...toRunView(run, targets, server, rollbacks), approvers, temporal_ui_url: links.run(run._id.toString()) };
  };

  return {
    findRun,
    runView,

    /** A run of the organization named by its id alone, as GET shows it (the live subscription's snapshot); null when there is none. */
    async runOf(principal: Principal, runId: string) {
      const run = await DeploymentRunModel.findOne({ _id: parseId(runId, 'Run'), organization_id: principal.organizationId, parent_run_id: null }).lean<DeploymentRun>();
      if (!run) return null;
      try {
        await findDeployment(principal, run.deployment_id.toString());
      } catch {
        return null;
      }
      return runView(run);
    },

    async listRuns(principal: Principal, deploymentId: string, page: PageQuery) {
      const deployment = await findDeployment(principal, deploymentId);
      // Rollback runs are read through their fleet run's targets.
      const listed = await findPage(DeploymentRunModel, { ...ownRunsOf(deployment._id), organization_id: principal.organizationId }, page, (run: DeploymentRun) => run);
      const counts = await targetCounts(listed.data.filter((run) => run.fleet).map((run) => run._id));
      return { ...listed, data: listed.data.map((run) => ({ ...toRunListView(run, counts.get(run._id.toString())), temporal_ui_url: links.run(run._id.toString()) })) };
    },

    async getRun(principal: Principal, deploymentId: string, runId: string) {
      return runView(await findRun(principal, deploymentId, runId));
    },

    /**
     * Where the whole log of a step of a run is (1-based `stepNumber`): the run's own step, or with
     * `serverId` a target's (a one-server run's only target is the run).
     */
    async stepLogOf(principal: Principal, deploymentId: string, runId: string, serverId: string | null, stepNumber: number) {
      const run = await findRun(principal, deploymentId, runId);
      if (serverId === null && run.fleet) throw notFound('Step (a fleet run’s steps run on its targets: …/targets/{server_id}/steps/{n}/log)');
      const holder = serverId === null ? run : await findTarget(run, serverId);
      if (serverId !== null) await checkTargetServer(principal, deploymentId, String(holder.server_id));
      return stepLogLocation(holder, stepNumber, `${run._id}-${serverId ?? run.server_id}`);
    },

    /** One server of a run, with its steps' commands and output. */
    async getTarget(principal: Principal, deploymentId: string, runId: string, serverId: string) {
      const run = await findRun(principal, deploymentId, runId);
      const target = await findTarget(run, serverId);
      await checkTargetServer(principal, deploymentId, String(target.server_id));
      if (target === run) return toTargetDetailView(run, await serverOf(run));
      const rollback = run.rollback ? await DeploymentRunModel.findOne({ 'rolls_back.run_id': run._id, 'rolls_back.target_id': target._id }, { 'steps.output': 0 }).lean<DeploymentRun>() : null;
      return toTargetDetailView(target, undefined, rollback);
    },

    runUiUrl: (runId: string) => links.run(runId),
  };
}

export type RunReads = ReturnType<typeof createRunReads>;
