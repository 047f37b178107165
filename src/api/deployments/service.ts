import { Types } from 'mongoose';
import { ApiError, notFound, tooMany, unlessTemporalUnreachable } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { closeRun, createRun, deleteRunsOf, requestCancel, withdrawQueuedRun } from '../../domain/deployments/runs';
import { DeploymentModel, DeploymentRunModel, FINAL_RUN_STATUSES, type Deployment, type DeploymentRun } from '../../domain/deployments/model';
import { DEFAULT_MAX_ACTIVE_RUNS, ServerNotRunnable, triggerAdmission } from './admission';
import type { CreateDeploymentInput, UpdateDeploymentInput } from './schemas';
import { toDeploymentListView, toDeploymentView, toRunListView, toRunView } from './views';
import { isDuplicateKey } from '../../domain/database';

export function createDeploymentService({
  workflows,
  log,
  maxActiveRuns = DEFAULT_MAX_ACTIVE_RUNS,
}: {
  workflows: WorkflowGateway;
  log: Logger;
  /** Runs an organization may have queued or running at once; a trigger beyond it is refused (429). */
  maxActiveRuns?: number;
}) {
  const { activeRuns, deploymentsById, deploymentExists, takeQueueSeq } = triggerAdmission(maxActiveRuns);

  async function findDeployment(organizationId: string, id: string) {
    const deployment = await deploymentsById(parseId(id, 'Deployment'));
    if (!deployment || deployment.organization_id.toString() !== organizationId) throw notFound('Deployment');
    return deployment;
  }

  async function findRun(organizationId: string, deploymentId: string, runId: string) {
    const run = await DeploymentRunModel.findOne({
      _id: parseId(runId, 'Run'),
      deployment_id: parseId(deploymentId, 'Run'),
      organization_id: organizationId,
    }).lean<DeploymentRun>();
    if (!run) throw notFound('Run');
    return run;
  }

  /** A run as the API shows it, with its workflow's page in the Temporal UI when TEMPORAL_UI_URL is set. */
  const runView = (run: DeploymentRun) => ({ ...toRunView(run), temporal_ui_url: workflows.runUiUrl(run._id.toString()) });
  const runListView = (run: DeploymentRun) => ({ ...toRunListView(run), temporal_ui_url: workflows.runUiUrl(run._id.toString()) });

  /** The server must exist in the caller's organization; another organization's looks like none. */
  async function checkServer(organizationId: string, serverId: string) {
    const exists = await ServerModel.exists({ _id: new Types.ObjectId(serverId), organization_id: organizationId });
    if (!exists) throw new ApiError('validation_failed', 'The request body is invalid', [{ path: 'server_id', message: 'No such server' }]);
  }

  const duplicateName = (name: string) => new ApiError('conflict', `A deployment named "${name}" already exists in this organization`);

  return {
    list(organizationId: string, page: PageQuery) {
      return findPage(DeploymentModel, { organization_id: organizationId }, page, toDeploymentListView);
    },

    async get(organizationId: string, id: string) {
      return toDeploymentView(await findDeployment(organizationId, id));
    },

    async create(organizationId: string, input: CreateDeploymentInput) {
      await checkServer(organizationId, input.server_id);
      try {
        const created = await DeploymentModel.create({ ...input, organization_id: organizationId });
        return toDeploymentView(created.toObject() as Deployment);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name);
        throw error;
      }
    },

    /** Changes apply to runs triggered afterwards; a run keeps the steps it was triggered with. */
    async update(organizationId: string, id: string, input: UpdateDeploymentInput) {
      const deployment = await findDeployment(organizationId, id);
      if (input.server_id) await checkServer(organizationId, input.server_id);
      try {
        const updated = await DeploymentModel.findOneAndUpdate({ _id: deployment._id }, { $set: input }, { returnDocument: 'after' }).lean<Deployment>();
        return toDeploymentView(updated!);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name!);
        throw error;
      }
    },

    /** Deletes the definition and its run history; refused while a run is queued or running. */
    async remove(organizationId: string, id: string) {
      const deployment = await findDeployment(organizationId, id);
      if (await DeploymentRunModel.exists({ deployment_id: deployment._id, status: { $in: ['queued', 'running'] } })) {
        throw new ApiError('conflict', 'This deployment has a queued or running run: cancel it first');
      }
      await DeploymentModel.deleteOne({ _id: deployment._id });
      await deleteRunsOf(deployment._id);
    },

    /**
     * Creates a queued run (a snapshot of the steps) and wakes the server's queue. The run's place in
     * the queue is an atomic counter on the server, taken before the insert: a trigger that finished
     * before another began always comes first; two that overlap may go either way, as either order
     * is theirs. (A crash between the two writes only leaves a number unused.) With an idempotency
     * key, a repeated trigger returns the run the first one created: its insert is refused by the
     * unique index on (deployment, key), and the run found instead.
     */
    async trigger(principal: Principal, deploymentId: string, idempotencyKey: string | undefined) {
      const [deployment, active] = await Promise.all([findDeployment(principal.organizationId, deploymentId), activeRuns.before(principal.organizationId)]);
      const replay = async () => {
        if (!idempotencyKey) return null;
        const existing = await DeploymentRunModel.findOne({ deployment_id: deployment._id, idempotency_key: idempotencyKey }).lean<DeploymentRun>();
        // Waking again is harmless, and heals a first attempt that died before its wake.
        if (existing?.status === 'queued') await wake(existing);
        return existing;
      };
      const wake = (run: DeploymentRun) =>
        unlessTemporalUnreachable('queue the run', () => workflows.wakeQueue(run.server_id.toString(), principal.organizationId));
      // Checked before the insert: triggers at the same moment may pass it by a few. A repeated
      // trigger still gets its run.
      if (active >= maxActiveRuns) {
        const existing = await replay();
        if (existing) return { run: existing, replayed: true };
        throw tooMany(`The organization already has ${maxActiveRuns} runs queued or running (its limit, ORG_MAX_ACTIVE_RUNS): retry once some have finished`, 30);
      }
      let run: DeploymentRun;
      try {
        const queueSeq = await takeQueueSeq({ serverId: deployment.server_id, organizationId: principal.organizationId });
        run = await createRun({
          organization_id: new Types.ObjectId(principal.organizationId),
          deployment_id: deployment._id,
          server_id: deployment.server_id,
          triggered_by: principal.tokenName,
          token_id: new Types.ObjectId(principal.tokenId),
          idempotency_key: idempotencyKey ?? null,
          queue_seq: queueSeq,
          steps: deployment.steps,
        });
        // The deployment was deleted while this trigger ran: take the run back, as if it had come after.
        if (!(await deploymentExists(deployment._id))) {
          await withdrawQueuedRun(run._id);
          throw notFound('Deployment');
        }
      } catch (error) {
        // The key was used before (or the server is no longer runnable, which a repeat need not care about).
        if (isDuplicateKey(error) || error instanceof ServerNotRunnable) {
          const existing = await replay();
          if (existing) return { run: existing, replayed: true };
        }
        if (error instanceof ServerNotRunnable) {
          const exists = await ServerModel.exists({ _id: deployment.server_id, organization_id: principal.organizationId });
          throw new ApiError(
            'conflict',
            exists
              ? 'The deployment’s server has not been verified yet: its host key is unknown, so Bosun will not connect'
              : 'The deployment’s server no longer exists: point the deployment at another server',
          );
        }
        throw error;
      }
      activeRuns.accepted(principal.organizationId);
      // Temporal answering: the run is accepted now and its queue woken meanwhile (a wake that fails
      // leaves it queued for the workers' sweep). Temporal in doubt: the wake must succeed first.
      if (workflows.looksReachable()) {
        const queued = run;
        wake(queued).catch((err) => log.warn({ err, runId: queued._id.toString() }, 'could not wake the run queue; the workers will'));
        return { run, replayed: false };
      }
      try {
        await wake(run);
      } catch (error) {
        // Not queued after all: take the run back unless a concurrent wake already started it.
        await withdrawQueuedRun(run._id);
        throw error;
      }
      return { run, replayed: false };
    },

    async listRuns(organizationId: string, deploymentId: string, page: PageQuery) {
      const deployment = await findDeployment(organizationId, deploymentId);
      return findPage(DeploymentRunModel, { deployment_id: deployment._id, organization_id: organizationId }, page, runListView);
    },

    async getRun(organizationId: string, deploymentId: string, runId: string) {
      return runView(await findRun(organizationId, deploymentId, runId));
    },

    runUiUrl: (runId: string) => workflows.runUiUrl(runId),

    /** Cancels a run: a queued one never starts; a running one has its command's process group killed. */
    async cancelRun(organizationId: string, deploymentId: string, runId: string) {
      const run = await findRun(organizationId, deploymentId, runId);
      if (FINAL_RUN_STATUSES.includes(run.status)) throw new ApiError('conflict', `The run has already finished (${run.status})`);
      // Still queued: it is simply never started (its queue skips runs that are not queued).
      const dropped = await closeRun(run._id, 'queued', 'cancelled', { cancel_requested_at: new Date() });
      if (!dropped) {
        await requestCancel(run._id);
        const found = await unlessTemporalUnreachable('cancel', () => workflows.cancelRunWorkflow(run._id.toString()));
        // Its workflow is gone (terminated by hand, or Temporal's data was reset): nothing runs it any more.
        if (!found) await closeRun(run._id, 'running', 'cancelled');
      }
      return runView(await findRun(organizationId, deploymentId, runId));
    },
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
