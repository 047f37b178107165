import { Types } from 'mongoose';
import { ApiError, notFound } from '../http/errors';
import { ServerModel } from '../../domain/servers/model';
import type { Principal } from '../../domain/tokens/service';
import { withdrawQueuedRun } from '../../domain/deployments/runs';
import { createFleetRun, createRun, type NewRun } from '../../domain/deployments/new-runs';
import { ServerNotRunnable } from '../../domain/servers/trigger-places';
import { DeploymentRunModel, type Deployment, type DeploymentRun } from '../../domain/deployments/model';
import { isDuplicateKey } from '../../domain/database';
import { gatesOf, healthCheckOf, maxConcurrencyOf, rollbackOf } from '../../domain/deployments/strategy';
import type { triggerAdmission } from './admission';
import { resolveStrategy, type TargetServer } from './targets';

/*
 * A trigger's or a retry's run stored, queued: a one-server run in its place in its server's queue,
 * or a fleet run with its targets; or, for a repeated request (its Idempotency-Key), the run the
 * first one created.
 */

/** What a trigger or a retry resolved before its run is stored: the run's fields, and its one server or its fleet's targets. */
export interface ResolvedRun {
  /** A fleet run's also carry the strategy and rollback it is triggered with. */
  fields: Omit<NewRun, 'queue_seq' | 'server_id'> & { strategy?: Deployment['strategy']; rollback?: Deployment['rollback'] };
  server: TargetServer | null;
  targets: Array<{ server: TargetServer; start_step: number; skipped_outputs?: NewRun['skipped_outputs'] }> | null;
}

/** What starts a run: a trigger (with its parameters), or a retry of an earlier run. */
export interface RunRequest {
  principal: Principal;
  deployment: Deployment;
  idempotencyKey: string | undefined;
  /** Digest of what was asked (the Idempotency-Key covers it). */
  digest: string;
  resolve: () => Promise<ResolvedRun>;
  /** A pipeline stage's run: its workflow is started by the pipeline run's, as its child; never by the trigger. */
  startedByParent?: boolean;
}

/** A run stored by this request, or found as an earlier one with its key stored it. */
export interface StoredRun {
  run: DeploymentRun;
  replayed: boolean;
}

/**
 * The run an earlier request with the same Idempotency-Key created (null without a key, or when there
 * is none); one that asked for something else (other parameters, another run retried) is refused.
 */
export async function earlierRun({ deployment, idempotencyKey, digest }: RunRequest, start: (run: DeploymentRun) => Promise<unknown>): Promise<DeploymentRun | null> {
  if (!idempotencyKey) return null;
  const existing = await DeploymentRunModel.findOne({ deployment_id: deployment._id, idempotency_key: idempotencyKey, parent_run_id: null }).lean<DeploymentRun>();
  if (existing && (existing.request_digest ?? null) !== digest && existing.request_digest !== null) {
    throw new ApiError('conflict', 'This Idempotency-Key was used for a different request (other parameters, or another run retried): use a new key');
  }
  // Starting again is harmless, and heals a first attempt that died before it started its run.
  if (existing?.status === 'queued') await start(existing);
  return existing;
}

/** The conflict a run on a server no longer runnable answers: unverified, or deleted. */
async function notRunnable(serverId: Types.ObjectId | null, organizationId: string): Promise<ApiError> {
  const exists = await ServerModel.exists({ _id: serverId, organization_id: organizationId });
  return new ApiError(
    'conflict',
    exists
      ? 'The deployment’s server has not been verified yet: its host key is unknown, so Bosun will not connect'
      : 'The deployment’s server no longer exists: point the deployment at another server',
  );
}

/** Stores the runs of a deployment's triggers and retries, through the admission's shared lookups and queue places. */
export function runCreation({ deploymentExists, takePlace }: Pick<ReturnType<typeof triggerAdmission>, 'deploymentExists' | 'takePlace'>) {
  /** A fleet run with its targets (waiting for their batches), or a one-server run placed in its server's queue. */
  async function store(principal: Principal, { fields, server, targets }: ResolvedRun, digest: string): Promise<DeploymentRun> {
    const { strategy: given, rollback, ...rest } = fields;
    const request = { ...rest, request_digest: digest };
    if (targets) {
      const gates = gatesOf({ strategy: given });
      const strategy = resolveStrategy(given && { ...given, gates }, targets.length);
      const snapshot = given ? { batch_size: given.batch_size ?? null, max_concurrency: maxConcurrencyOf({ strategy: given }), max_failures: given.max_failures ?? null, gates, health_check: healthCheckOf({ strategy: given }) } : null;
      return createFleetRun(
        {
          ...request,
          server_id: null,
          queue_seq: null,
          fleet: {
            total: targets.length,
            batches: strategy.batches,
            batch_size: strategy.batchSize,
            ...(strategy.maxConcurrency !== null ? { max_concurrency: strategy.maxConcurrency } : {}),
            max_failures: strategy.maxFailures,
            strategy: snapshot,
            rollback: rollbackOf({ rollback }),
          },
        },
        targets.map(({ server: target, start_step, skipped_outputs }, index) => ({
          server_id: target._id,
          server_title: target.title,
          server_host: target.host,
          batch: strategy.batchOfTargets[index],
          start_step,
          skipped_outputs,
        })),
      );
    }
    const serverId = server!._id;
    const { place, serverTitle } = await takePlace({ serverId, organizationId: principal.organizationId });
    return createRun({ ...request, server_id: serverId, queue_seq: place, server_title: serverTitle });
  }

  /**
   * The request's run, queued: resolved, stored, and taken back when its deployment was deleted
   * meanwhile. A key used a moment ago by a concurrent request answers that request's run (`replay`).
   */
  return async function createQueuedRun(request: RunRequest, replay: () => Promise<DeploymentRun | null>): Promise<StoredRun> {
    const { principal, deployment } = request;
    let serverId: Types.ObjectId | null = null;
    try {
      const resolved = await request.resolve();
      serverId = resolved.server?._id ?? null;
      const run = await store(principal, resolved, request.digest);
      // The deployment was deleted while this trigger ran: take the run back, as if it had come after.
      if (!(await deploymentExists(deployment._id))) {
        await withdrawQueuedRun(run._id);
        throw notFound('Deployment');
      }
      return { run, replayed: false };
    } catch (error) {
      // The key was used a moment ago (or the server is no longer runnable, which a repeat need not care about).
      if (isDuplicateKey(error) || error instanceof ServerNotRunnable) {
        const existing = await replay();
        if (existing) return { run: existing, replayed: true };
      }
      if (error instanceof ServerNotRunnable) throw await notRunnable(serverId, principal.organizationId);
      throw error;
    }
  };
}
