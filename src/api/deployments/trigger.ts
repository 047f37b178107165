import { actorText } from '../../domain/access/actor';
import { actorLineOf, actorOf } from '../../domain/tokens/service';
import { checkRunTargets } from '../access/gate';
import { Types } from 'mongoose';
import { ApiError, notFound, tooMany, unlessTemporalUnreachable } from '../http/errors';
import { ServerModel } from '../../domain/servers/model';
import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { withdrawQueuedRun } from '../../domain/deployments/runs';
import { createFleetRun, createRun, type NewRun } from '../../domain/deployments/new-runs';
import { ServerNotRunnable } from '../../domain/servers/trigger-places';
import { DeploymentRunModel, FINAL_RUN_STATUSES, type Deployment, type DeploymentRun, type RunStatus } from '../../domain/deployments/model';
import { requestDigest, storeParameters, type StoredParameter } from '../../domain/deployments/parameters';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { triggerAdmission } from './admission';
import type { RetryInput, TriggerInput } from './schemas';
import { refuseIfFrozen } from '../freezes/enforce';
import { freezesOf } from '../../domain/freezes/coverage';
import { batchOf, resolveStrategy, resolveTargets, type TargetServer } from './targets';
import { isDuplicateKey } from '../../domain/database';
import { parametersFor, type FindDeployment } from './definitions';
import type { RunReads } from './run-reads';
import { SettledStarts } from './settled-starts';
import { gatesOf, healthCheckOf, rollbackOf } from '../../domain/deployments/strategy';
import { assertPlanUnchanged, planOf } from './plan-hash';

/** Where a run comes from besides who triggered it: a schedule's tick (its schedule, and when the tick was due). */
export interface RunOrigin {
  schedule?: { id: Types.ObjectId; name: string; scheduled_at: Date };
}

/** What starts a run: a trigger (with its parameters), or a retry of an earlier run. */
interface RunRequest {
  principal: Principal;
  deployment: Deployment;
  idempotencyKey: string | undefined;
  /** Digest of what was asked (the Idempotency-Key covers it). */
  digest: string;
  build: () => Promise<{ fields: Omit<NewRun, 'queue_seq' | 'server_id'>; server: TargetServer | null; targets: Array<{ server: TargetServer; start_step: number }> | null }>;
}

/** Triggers and retries: a run created, given its place and started, past what `admission` checks first. */
export function runTriggers({
  workflows,
  log,
  secretBox,
  maxActiveRuns,
  admission,
  findDeployment,
  findRun,
}: {
  workflows: WorkflowGateway;
  log: Logger;
  secretBox: SecretBox;
  /** Runs an organization may have queued or running at once; a trigger beyond it is refused (429). */
  maxActiveRuns: number;
  admission: ReturnType<typeof triggerAdmission>;
  findDeployment: FindDeployment;
  findRun: RunReads['findRun'];
}) {
  const { activeRuns, deploymentExists, takePlace } = admission;
  const settledStarts = new SettledStarts();

  /** Servers by id, with what a freeze asks of them (a server deleted since: its id alone). */
  const serversOf = async (ids: Types.ObjectId[]) => {
    const found = await ServerModel.find({ _id: { $in: ids } }, { title: 1, tags: 1 }).lean();
    return ids.map((id) => found.find((s) => s._id.equals(id)) ?? { _id: id, title: null, tags: [] });
  };

  const runIdentity = (principal: Principal, deployment: Deployment, idempotencyKey: string | undefined, origin?: RunOrigin) => ({
    schedule: origin?.schedule ?? null,
    organization_id: new Types.ObjectId(principal.organizationId),
    deployment_id: deployment._id,
    triggered_by: principal.tokenName ?? actorLineOf(principal),
    token_id: principal.tokenId ? new Types.ObjectId(principal.tokenId) : null,
    actor: actorOf(principal),
    idempotency_key: idempotencyKey ?? null,
  });

  /**
   * A trigger's or a retry's run, from its request to its answer: a queued run created, and its
   * workflow started. A one-server run takes its place in its server's queue and the queue is woken:
   * it starts the run's workflow, its turn given, when its turn comes (at once on an idle server). A
   * fleet run (with its targets, waiting for their batches) starts its own workflow. The place in the
   * queue is an atomic counter on the server (src/domain/run-queue), taken before the insert: a
   * trigger that finished before another began always comes first; two that overlap may go either way. With an
   * idempotency key, a repeated request returns the run the first one created (its insert is refused
   * by the unique index on (deployment, key), and the run found instead); one that asked for
   * something else (other parameters) is refused. Its workflow starts once the triggers around it
   * are answered (SettledStarts).
   */
  async function startRun(request: RunRequest) {
    const answered = settledStarts.begin();
    try {
      return await storeAndStart(request);
    } finally {
      answered();
    }
  }

  async function storeAndStart({ principal, deployment, idempotencyKey, digest, build }: RunRequest) {
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
    /**
     * A fleet run's workflow starts; for a one-server run its server's queue is woken (wakes of one
     * queue coalesce), and starts the run's workflow, its turn given, when its turn comes.
     */
    const start = (run: DeploymentRun) =>
      unlessTemporalUnreachable('queue the run', () =>
        run.fleet
          ? workflows.runs.startFleet(
              { runId: run._id.toString(), organizationId: principal.organizationId, deploymentId: deployment._id.toString(), deploymentName: deployment.name, triggeredBy: actorText(run.actor, run.triggered_by) },
              run.fleet.total,
            )
          : workflows.queues.wake(String(run.server_id), principal.organizationId, run._id.toString()),
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
      const { strategy: given, rollback, ...rest } = fields as typeof fields & { strategy?: Deployment['strategy']; rollback?: Deployment['rollback'] };
      const request = { ...rest, request_digest: digest };
      if (targets) {
        const strategy = resolveStrategy(given, targets.length);
        run = await createFleetRun(
          {
            ...request,
            server_id: null,
            queue_seq: null,
            fleet: { total: targets.length, batches: strategy.batches, batch_size: strategy.batchSize, max_failures: strategy.maxFailures, strategy: given ? { batch_size: given.batch_size ?? null, max_failures: given.max_failures ?? null, gates: gatesOf({ strategy: given }), health_check: healthCheckOf({ strategy: given }) } : null, rollback: rollbackOf({ rollback }) },
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
        const { place, serverTitle } = await takePlace({ serverId, organizationId: principal.organizationId });
        run = await createRun({ ...request, server_id: serverId, queue_seq: place, server_title: serverTitle });
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
    if (workflows.reachability.looksReachable()) {
      const queued = run;
      settledStarts.defer(() => void start(queued).catch((err) => log.warn({ err, runId: queued._id.toString() }, 'could not start the run; the workers will')));
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
    /** A trigger: a run of the deployment's steps on its server, or on each of its targets, with the parameters given. */
    async trigger(principal: Principal, deploymentId: string, idempotencyKey: string | undefined, input: TriggerInput = { parameters: {} }, origin?: RunOrigin) {
      // Read beside the deployment, not after it: the freezes are asked of every trigger.
      const freezes = freezesOf(principal.organizationId);
      freezes.catch(() => undefined);
      const deployment = await findDeployment(principal, deploymentId, 'deployments:run');
      const values = parametersFor(deployment, input.parameters);
      return startRun({
        principal,
        deployment,
        idempotencyKey,
        digest: requestDigest(input.parameters, secretBox),
        build: async () => {
          const fields = {
            ...runIdentity(principal, deployment, idempotencyKey, origin),
            parameters: storeParameters(values, secretBox, principal.organizationId),
            steps: deployment.steps,
          };
          // What runs is what was planned: the same hash as POST /plan's, checked against the one reviewed.
          const hashed = (servers: readonly { _id: Types.ObjectId }[]) => {
            const { hash } = planOf(deployment, servers, values);
            assertPlanUnchanged(input.plan_hash, hash);
            return hash;
          };
          if (deployment.server_id) {
            await checkRunTargets(principal, deploymentId, [{ _id: deployment.server_id }]);
            const plan_hash = hashed([{ _id: deployment.server_id }]);
            const freeze_override = await refuseIfFrozen(principal, () => serversOf([deployment.server_id!]), input.override_freeze, { freezes });
            return { fields: { ...fields, plan_hash, freeze_override }, server: { _id: deployment.server_id } as TargetServer, targets: null };
          }
          const servers = await resolveTargets(deployment);
          if (!servers.length) throw new ApiError('conflict', 'The deployment’s targets match no server: add servers with its tags, or list servers in targets.server_ids');
          await checkRunTargets(principal, deploymentId, servers);
          const plan_hash = hashed(servers);
          const freeze_override = await refuseIfFrozen(principal, servers, input.override_freeze, { freezes });
          return { fields: { ...fields, plan_hash, freeze_override, strategy: deployment.strategy, rollback: deployment.rollback }, server: null, targets: servers.map((server) => ({ server, start_step: 0 })) };
        },
      });
    },

    /**
     * Retries a finished run that did not succeed: a new run (`retry_of`) over the targets that did
     * not succeed, each from its first step that did not succeed, with the same steps and parameters.
     */
    async retry(principal: Principal, deploymentId: string, runId: string, idempotencyKey: string | undefined, input: RetryInput = {}) {
      const deployment = await findDeployment(principal, deploymentId, 'deployments:run');
      const original = await findRun(principal, deploymentId, runId, 'deployments:run');
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
            await checkRunTargets(principal, deploymentId, [{ _id: original.server_id! }]);
            const freeze_override = await refuseIfFrozen(principal, () => serversOf([original.server_id!]), input.override_freeze);
            return { fields: { ...fields, freeze_override, start_step: firstUnfinished(original) }, server: { _id: original.server_id } as TargetServer, targets: null };
          }
          const left = await DeploymentRunModel.find({ parent_run_id: original._id, status: { $ne: 'success' } }, { 'steps.output': 0 }).sort({ batch: 1, _id: 1 }).lean<DeploymentRun[]>();
          if (!left.length) throw new ApiError('conflict', 'Every target succeeded: there is nothing to retry');
          const servers = new Map(
            (await ServerModel.find({ _id: { $in: left.map((t) => t.server_id) } }, { title: 1, host: 1, status: 1, tags: 1 }).lean<TargetServer[]>()).map((s) => [s._id.toString(), s]),
          );
          const touched = left.map((t) => servers.get(String(t.server_id)) ?? { _id: t.server_id!, title: t.server_title ?? null, tags: [] });
          await checkRunTargets(principal, deploymentId, touched);
          const freeze_override = await refuseIfFrozen(principal, touched, input.override_freeze);
          return {
            fields: { ...fields, freeze_override, strategy: original.fleet.strategy, rollback: original.fleet.rollback },
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
  };
}
