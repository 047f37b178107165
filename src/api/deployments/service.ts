import { Types } from 'mongoose';
import { ApiError, notFound, tooMany, unlessTemporalUnreachable } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { closeRun, createFleetRun, createRun, deleteRunsOf, requestCancel, withdrawQueuedRun, type NewRun } from '../../domain/deployments/runs';
import { DeploymentModel, DeploymentRunModel, FINAL_RUN_STATUSES, type Deployment, type DeploymentRun, type RunStatus } from '../../domain/deployments/model';
import {
  environmentName,
  MASK,
  requestDigest,
  resolveParameters,
  storeParameters,
  type ParameterValue,
  type StoredParameter,
} from '../../domain/deployments/parameters';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { DEFAULT_MAX_ACTIVE_RUNS, ServerNotRunnable, triggerAdmission } from './admission';
import type { CreateDeploymentInput, TriggerInput, UpdateDeploymentInput } from './schemas';
import { batchOf, resolveStrategy, resolveTargets, type TargetServer } from './targets';
import { toDeploymentListView, toDeploymentView } from './views';
import { createRunReads } from './run-reads';
import { isDuplicateKey } from '../../domain/database';

/** What starts a run: a trigger (with its parameters), or a retry of an earlier run. */
interface RunRequest {
  principal: Principal;
  deployment: Deployment;
  idempotencyKey: string | undefined;
  /** Digest of what was asked (the Idempotency-Key covers it). */
  digest: string;
  build: () => Promise<{ fields: Omit<NewRun, 'queue_seq' | 'server_id'>; server: TargetServer | null; targets: Array<{ server: TargetServer; start_step: number }> | null }>;
}

export function createDeploymentService({
  workflows,
  log,
  secretBox,
  maxActiveRuns = DEFAULT_MAX_ACTIVE_RUNS,
}: {
  workflows: WorkflowGateway;
  log: Logger;
  secretBox: SecretBox;
  /** Runs an organization may have queued or running at once; a trigger beyond it is refused (429). */
  maxActiveRuns?: number;
}) {
  const { activeRuns, deploymentsById, deploymentExists, takeQueueSeq } = triggerAdmission(maxActiveRuns);

  async function findDeployment(organizationId: string, id: string) {
    const deployment = await deploymentsById(parseId(id, 'Deployment'));
    if (!deployment || deployment.organization_id.toString() !== organizationId) throw notFound('Deployment');
    return deployment;
  }

  const runs = createRunReads({ workflows, findDeployment });
  const { findRun, runView } = runs;

  /** The server must exist in the caller's organization; another organization's looks like none. */
  async function checkServers(organizationId: string, serverIds: string[], path: string) {
    const ids = [...new Set(serverIds)];
    const found = await ServerModel.countDocuments({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) }, organization_id: organizationId });
    if (found !== ids.length) throw new ApiError('validation_failed', 'The request body is invalid', [{ path, message: ids.length > 1 ? 'Some of these servers do not exist' : 'No such server' }]);
  }
  const checkTargets = async (organizationId: string, input: { server_id?: string; targets?: { server_ids?: string[] } }) => {
    if (input.server_id) await checkServers(organizationId, [input.server_id], 'server_id');
    if (input.targets?.server_ids?.length) await checkServers(organizationId, input.targets.server_ids, 'targets.server_ids');
  };

  /** The parameters a trigger runs with, or a 422 naming each problem. */
  function parametersFor(deployment: Deployment, given: Record<string, string>): ParameterValue[] {
    const { values, problems } = resolveParameters(deployment.parameters ?? [], given);
    if (problems.length) throw new ApiError('validation_failed', 'The parameters are invalid', problems);
    return values;
  }

  const duplicateName = (name: string) => new ApiError('conflict', `A deployment named "${name}" already exists in this organization`);

  const runIdentity = (principal: Principal, deployment: Deployment, idempotencyKey: string | undefined) => ({
    organization_id: new Types.ObjectId(principal.organizationId),
    deployment_id: deployment._id,
    triggered_by: principal.tokenName,
    token_id: new Types.ObjectId(principal.tokenId),
    idempotency_key: idempotencyKey ?? null,
  });

  /**
   * Creates a queued run and starts it: a one-server run takes its place in its server's queue and
   * wakes it; a fleet run (with its targets, waiting for their batches) starts its own workflow. The
   * place in the queue is an atomic counter on the server, taken before the insert: a trigger that
   * finished before another began always comes first; two that overlap may go either way. With an
   * idempotency key, a repeated request returns the run the first one created (its insert is refused
   * by the unique index on (deployment, key), and the run found instead); one that asked for
   * something else (other parameters) is refused.
   */
  async function startRun({ principal, deployment, idempotencyKey, digest, build }: RunRequest) {
    const active = await activeRuns.before(principal.organizationId);
    const replay = async () => {
      if (!idempotencyKey) return null;
      const existing = await DeploymentRunModel.findOne({ deployment_id: deployment._id, idempotency_key: idempotencyKey, parent_run_id: null }).lean<DeploymentRun>();
      if (existing && (existing.request_digest ?? null) !== digest && existing.request_digest !== null) {
        throw new ApiError('conflict', 'This Idempotency-Key was used for a different request (other parameters, or another run retried): use a new key');
      }
      // Starting again is harmless, and heals a first attempt that died before it started its run.
      if (existing?.status === 'queued') await start(existing);
      return existing;
    };
    const start = (run: DeploymentRun) =>
      unlessTemporalUnreachable('queue the run', () =>
        run.fleet
          ? workflows.startFleetRun(
              { runId: run._id.toString(), organizationId: principal.organizationId, deploymentId: deployment._id.toString(), deploymentName: deployment.name, triggeredBy: `API token: ${run.triggered_by}` },
              run.fleet.total,
            )
          : workflows.wakeQueue(String(run.server_id), principal.organizationId),
      );
    // Checked before the insert: triggers at the same moment may pass it by a few. A repeated
    // trigger still gets its run.
    if (active >= maxActiveRuns) {
      const existing = await replay();
      if (existing) return { run: existing, replayed: true };
      throw tooMany(`The organization already has ${maxActiveRuns} runs queued or running (its limit, ORG_MAX_ACTIVE_RUNS): retry once some have finished`, 30);
    }
    const existing = await replay();
    if (existing) return { run: existing, replayed: true };
    let run: DeploymentRun;
    let serverId: Types.ObjectId | null = null;
    try {
      const { fields, server, targets } = await build();
      const { strategy: given, ...rest } = fields as typeof fields & { strategy?: { batch_size?: unknown; max_failures?: unknown } | null };
      const request = { ...rest, request_digest: digest };
      if (targets) {
        const strategy = resolveStrategy(given, targets.length);
        run = await createFleetRun(
          {
            ...request,
            server_id: null,
            queue_seq: null,
            fleet: { total: targets.length, batches: strategy.batches, batch_size: strategy.batchSize, max_failures: strategy.maxFailures, strategy: given ? { batch_size: given.batch_size ?? null, max_failures: given.max_failures ?? null } : null },
          },
          targets.map(({ server: target, start_step }, index) => ({
            server_id: target._id,
            server_title: target.title,
            server_host: target.host,
            batch: batchOf(index, strategy.batchSize),
            start_step,
          })),
        );
      } else {
        serverId = server!._id;
        const queueSeq = await takeQueueSeq({ serverId, organizationId: principal.organizationId });
        run = await createRun({ ...request, server_id: serverId, queue_seq: queueSeq });
      }
      // The deployment was deleted while this trigger ran: take the run back, as if it had come after.
      if (!(await deploymentExists(deployment._id))) {
        await withdrawQueuedRun(run._id);
        throw notFound('Deployment');
      }
    } catch (error) {
      // The key was used a moment ago (or the server is no longer runnable, which a repeat need not care about).
      if (isDuplicateKey(error) || error instanceof ServerNotRunnable) {
        const existing = await replay();
        if (existing) return { run: existing, replayed: true };
      }
      if (error instanceof ServerNotRunnable) {
        const exists = await ServerModel.exists({ _id: serverId, organization_id: principal.organizationId });
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
    // Temporal answering: the run is accepted now and started meanwhile (a start that fails leaves it
    // queued for the workers' sweep). Temporal in doubt: the start must succeed first.
    if (workflows.looksReachable()) {
      const queued = run;
      start(queued).catch((err) => log.warn({ err, runId: queued._id.toString() }, 'could not start the run; the workers will'));
      return { run, replayed: false };
    }
    try {
      await start(run);
    } catch (error) {
      // Not queued after all: take the run back unless a concurrent start already began it.
      await withdrawQueuedRun(run._id);
      throw error;
    }
    return { run, replayed: false };
  }

  return {
    list(organizationId: string, page: PageQuery) {
      return findPage(DeploymentModel, { organization_id: organizationId }, page, toDeploymentListView);
    },

    async get(organizationId: string, id: string) {
      return toDeploymentView(await findDeployment(organizationId, id));
    },

    async create(organizationId: string, input: CreateDeploymentInput) {
      await checkTargets(organizationId, input);
      try {
        const created = await DeploymentModel.create({ ...input, organization_id: organizationId } as Record<string, unknown>);
        return toDeploymentView(created.toObject() as Deployment);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name);
        throw error;
      }
    },

    /** Changes apply to runs triggered afterwards; a run keeps the steps it was triggered with. */
    async update(organizationId: string, id: string, input: UpdateDeploymentInput) {
      const deployment = await findDeployment(organizationId, id);
      await checkTargets(organizationId, input);
      // Switching between one server and many: the other kind is cleared.
      const $set: Record<string, unknown> = { ...input };
      if (input.server_id) Object.assign($set, { targets: null, strategy: null });
      if (input.targets) $set.server_id = null;
      if (input.strategy && (input.server_id ?? (!input.targets && deployment.server_id))) {
        throw new ApiError('validation_failed', 'The request body is invalid', [{ path: 'strategy', message: 'strategy applies to targets, not to one server_id' }]);
      }
      try {
        const updated = await DeploymentModel.findOneAndUpdate({ _id: deployment._id }, { $set }, { returnDocument: 'after' }).lean<Deployment>();
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

    /** A trigger: a run of the deployment's steps on its server, or on each of its targets, with the parameters given. */
    async trigger(principal: Principal, deploymentId: string, idempotencyKey: string | undefined, input: TriggerInput = { parameters: {} }) {
      const deployment = await findDeployment(principal.organizationId, deploymentId);
      const values = parametersFor(deployment, input.parameters);
      return startRun({
        principal,
        deployment,
        idempotencyKey,
        digest: requestDigest(input.parameters, secretBox),
        build: async () => {
          const fields = {
            ...runIdentity(principal, deployment, idempotencyKey),
            parameters: storeParameters(values, secretBox, principal.organizationId),
            steps: deployment.steps,
          };
          if (deployment.server_id) return { fields, server: { _id: deployment.server_id } as TargetServer, targets: null };
          const servers = await resolveTargets(deployment);
          if (!servers.length) throw new ApiError('conflict', 'The deployment’s targets match no server: add servers with its tags, or list servers in targets.server_ids');
          return { fields: { ...fields, strategy: deployment.strategy }, server: null, targets: servers.map((server) => ({ server, start_step: 0 })) };
        },
      });
    },

    /**
     * Retries a finished run that did not succeed: a new run (`retry_of`) over the targets that did
     * not succeed, each from its first step that did not succeed, with the same steps and parameters.
     */
    async retry(principal: Principal, deploymentId: string, runId: string, idempotencyKey: string | undefined) {
      const deployment = await findDeployment(principal.organizationId, deploymentId);
      const original = await findRun(principal.organizationId, deploymentId, runId);
      if (!FINAL_RUN_STATUSES.includes(original.status as RunStatus)) throw new ApiError('conflict', `The run is still ${original.status}: retry it once it has finished`);
      const firstUnfinished = (run: DeploymentRun) => Math.max(0, run.steps.findIndex((step) => step.status !== 'success'));
      return startRun({
        principal,
        deployment,
        idempotencyKey,
        digest: secretBox.digest(original._id.toString(), 'retry-request'),
        build: async () => {
          const fields = {
            ...runIdentity(principal, deployment, idempotencyKey),
            parameters: original.parameters as StoredParameter[],
            retry_of: original._id,
            steps: original.steps,
          };
          if (!original.fleet) {
            if (original.status === 'success') throw new ApiError('conflict', 'The run succeeded: there is nothing to retry');
            return { fields: { ...fields, start_step: firstUnfinished(original) }, server: { _id: original.server_id } as TargetServer, targets: null };
          }
          const left = await DeploymentRunModel.find({ parent_run_id: original._id, status: { $ne: 'success' } }, { 'steps.output': 0 }).sort({ batch: 1, _id: 1 }).lean<DeploymentRun[]>();
          if (!left.length) throw new ApiError('conflict', 'Every target succeeded: there is nothing to retry');
          const servers = new Map(
            (await ServerModel.find({ _id: { $in: left.map((t) => t.server_id) } }, { title: 1, host: 1, status: 1 }).lean<TargetServer[]>()).map((s) => [s._id.toString(), s]),
          );
          return {
            fields: { ...fields, strategy: original.fleet.strategy },
            server: null,
            targets: left.map((t) => ({
              // A server deleted since keeps its place: its target fails, unrun, saying so.
              server: servers.get(String(t.server_id)) ?? ({ _id: t.server_id, title: t.server_title ?? String(t.server_id), host: t.server_host ?? '', status: 'unverified' } as TargetServer),
              start_step: firstUnfinished(t),
            })),
          };
        },
      });
    },

    /** What a trigger with this body would run, where and in which batches, and what to look out for. Runs nothing, stores nothing. */
    async plan(organizationId: string, deploymentId: string, input: TriggerInput = { parameters: {} }) {
      const deployment = await findDeployment(organizationId, deploymentId);
      const values = parametersFor(deployment, input.parameters);
      const servers = await resolveTargets(deployment);
      const { batchSize, maxFailures, batches } = resolveStrategy(deployment.server_id ? null : deployment.strategy, servers.length);
      const busy = new Map(
        (
          await DeploymentRunModel.aggregate<{ _id: Types.ObjectId; n: number }>([
            { $match: { server_id: { $in: servers.map((s) => s._id) }, status: { $in: ['queued', 'running'] }, queue_seq: { $ne: null } } },
            { $group: { _id: '$server_id', n: { $sum: 1 } } },
          ])
        ).map((row) => [row._id.toString(), row.n]),
      );
      const warnings: { server_id: string | null; code: string; message: string }[] = [];
      if (!servers.length) warnings.push({ server_id: null, code: 'no_targets', message: 'No server matches the deployment’s targets: a trigger would be refused' });
      for (const server of servers) {
        const id = server._id.toString();
        if (server.status === 'unverified') warnings.push({ server_id: id, code: 'unverified', message: `${server.title} is not verified: its target would fail without running` });
        if (server.status === 'offline') warnings.push({ server_id: id, code: 'offline', message: `${server.title} is offline: its steps would fail unless it comes back` });
        const waiting = busy.get(id);
        if (waiting) warnings.push({ server_id: id, code: 'busy', message: `${server.title} has ${waiting} run${waiting > 1 ? 's' : ''} queued or running: this run would wait its turn` });
      }
      return {
        deployment_id: deployment._id.toString(),
        strategy: { batch_size: batchSize, max_failures: maxFailures, batches: servers.length ? batches : 0 },
        targets: servers.map((server, index) => ({
          server_id: server._id.toString(),
          title: server.title,
          host: server.host,
          status: server.status,
          batch: batchOf(index, batchSize),
        })),
        steps: toDeploymentView(deployment).steps,
        environment: Object.fromEntries(values.map((p) => [environmentName(p.name), p.secret ? MASK : p.value])),
        warnings,
      };
    },

    listRuns: runs.listRuns,
    getRun: runs.getRun,
    stepLogOf: runs.stepLogOf,
    getTarget: runs.getTarget,
    runUiUrl: runs.runUiUrl,
    runOf: runs.runOf,

    /** Cancels a run: a queued one never starts; a running one has its command's process group killed. */
    async cancelRun(organizationId: string, deploymentId: string, runId: string) {
      const run = await findRun(organizationId, deploymentId, runId);
      if (FINAL_RUN_STATUSES.includes(run.status as RunStatus)) throw new ApiError('conflict', `The run has already finished (${run.status})`);
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
