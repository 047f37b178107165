import { actorOf, recordedByOf } from '../../domain/tokens/service';
import { Types } from 'mongoose';
import { ApiError, tooMany } from '../http/errors';
import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { FINAL_RUN_STATUSES, type Deployment, type RunStatus } from '../../domain/deployments/model';
import { requestDigest, storeParameters, type StoredParameter } from '../../domain/deployments/parameters';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { triggerAdmission } from './admission';
import type { RetryInput, TriggerInput } from './schemas';
import { freezesOf } from '../../domain/freezes/coverage';
import { parametersFor, type FindDeployment } from './definitions';
import type { RunReads } from './run-reads';
import { earlierRun, runCreation, type RunRequest, type StoredRun } from './run-creation';
import { runStarter } from './run-start';
import { resolveRetry, resolveTrigger } from './run-resolution';

/**
 * Where a run comes from besides who triggered it: a schedule's tick (its schedule, and when the
 * tick was due), or a pipeline run's stage (its workflow starts the run as its child: the trigger
 * stores it and starts nothing, and a change freeze holds it, frozen, instead of refusing it).
 */
export interface RunOrigin {
  schedule?: { id: Types.ObjectId; name: string; scheduled_at: Date };
  pipeline?: { id: Types.ObjectId; name: string; stage: string };
  /** A pipeline stage's: the deployment's steps, strategy and rollback as its pipeline run was triggered with them. */
  definition?: Pick<Deployment, 'steps' | 'strategy' | 'rollback'> | null;
}

/** Who and what a run is of, as every run of a request records it. */
const runIdentity = (principal: Principal, deployment: Deployment, idempotencyKey: string | undefined, origin?: RunOrigin) => ({
  schedule: origin?.schedule ?? null,
  pipeline_run: origin?.pipeline ?? null,
  organization_id: new Types.ObjectId(principal.organizationId),
  deployment_id: deployment._id,
  triggered_by: recordedByOf(principal),
  token_id: principal.tokenId ? new Types.ObjectId(principal.tokenId) : null,
  actor: actorOf(principal),
  idempotency_key: idempotencyKey ?? null,
});

/**
 * Triggers and retries: a run created, given its place and started, past what `admission` checks
 * first. Each request goes through the same phases: the organization's limit of active runs; the
 * run an earlier request with its Idempotency-Key created (run-creation.ts); what the run touches,
 * resolved and checked (run-resolution.ts); the run stored, queued; its workflow started
 * (run-start.ts).
 */
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
  const { activeRuns } = admission;
  const createQueuedRun = runCreation(admission);
  const starter = runStarter({ workflows, log });

  /**
   * A trigger's or a retry's run, from its request to its answer. A one-server run takes its place
   * in its server's queue: a trigger that finished before another began always comes first; two that
   * overlap may go either way. With an idempotency key, a repeated request returns the run the first
   * one created (its insert is refused by the unique index on (deployment, key), and the run found
   * instead); one that asked for something else (other parameters) is refused.
   */
  async function startRun(request: RunRequest): Promise<StoredRun> {
    const answered = starter.begin();
    try {
      return await storeAndStart(request);
    } finally {
      answered();
    }
  }

  async function storeAndStart(request: RunRequest): Promise<StoredRun> {
    const { principal, deployment } = request;
    const active = await activeRuns.before(principal.organizationId);
    const replay = () => earlierRun(request, (run) => (request.startedByParent ? Promise.resolve() : starter.start(principal.organizationId, deployment, run)));
    // Checked before the insert: triggers at the same moment may pass it by a few. A repeated
    // trigger still gets its run.
    if (active >= maxActiveRuns) {
      const existing = await replay();
      if (existing) return { run: existing, replayed: true };
      throw tooMany(`The organization already has ${maxActiveRuns} runs queued or running (its limit, ORG_MAX_ACTIVE_RUNS): retry once some have finished`, 30);
    }
    const existing = await replay();
    if (existing) return { run: existing, replayed: true };
    const stored = await createQueuedRun(request, replay);
    if (stored.replayed) return stored;
    activeRuns.accepted(principal.organizationId);
    if (!request.startedByParent) await starter.startAccepted(principal.organizationId, deployment, stored.run);
    return stored;
  }

  return {
    /** A trigger: a run of the deployment's steps on its server, or on each of its targets, with the parameters given. */
    async trigger(principal: Principal, deploymentId: string, idempotencyKey: string | undefined, input: TriggerInput = { parameters: {} }, origin?: RunOrigin) {
      // Read beside the deployment, not after it: the freezes are asked of every trigger.
      const freezes = freezesOf(principal.organizationId);
      freezes.catch(() => undefined);
      const found = await findDeployment(principal, deploymentId, 'deployments:run');
      const deployment = origin?.definition ? { ...found, ...origin.definition } : found;
      const values = parametersFor(deployment, input.parameters);
      const fields = {
        ...runIdentity(principal, deployment, idempotencyKey, origin),
        parameters: storeParameters(values, secretBox, principal.organizationId),
        steps: deployment.steps,
      };
      const startedByParent = !!origin?.pipeline;
      return startRun({
        principal,
        deployment,
        idempotencyKey,
        digest: requestDigest(input.parameters, secretBox),
        resolve: resolveTrigger({ principal, deployment, deploymentId, values, input, freezes, heldWhileFrozen: startedByParent }, fields),
        startedByParent,
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
      const fields = {
        ...runIdentity(principal, deployment, idempotencyKey),
        parameters: original.parameters as StoredParameter[],
        retry_of: original._id,
        steps: original.steps,
      };
      return startRun({
        principal,
        deployment,
        idempotencyKey,
        digest: secretBox.digest(original._id.toString(), 'retry-request'),
        resolve: resolveRetry({ principal, deploymentId, original, input }, fields),
      });
    },
  };
}
