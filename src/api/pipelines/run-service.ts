import type { Types } from 'mongoose';
import type { Logger } from '../../logger';
import type { Deployment } from '../../domain/deployments/model';
import { FINAL_PIPELINE_RUN_STATUSES, PipelineRunModel, type Pipeline, type PipelineRun } from '../../domain/pipelines/model';
import { resolveParameters, storeParameters } from '../../domain/deployments/parameters';
import { cancelQueuedPipelineRun, finishPipelineRun, requestPipelineCancel } from '../../domain/pipelines/runs';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { WorkflowGateway } from '../../domain/temporal/client';
import { actorOf, recordedByOf, type Principal } from '../../domain/tokens/service';
import { isDuplicateKey } from '../../domain/database';
import type { DeploymentService } from '../deployments/service';
import { assertPlanUnchanged } from '../deployments/plan-hash';
import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import { findPage, type PageQuery } from '../http/pagination';
import { AGENT_HOLD_GATE, agentHolds } from './agent-holds';
import { pipelinePlanOf, runnableStages } from './plan';
import { findPipeline } from './lookup';
import { runOfPipeline } from './run-lookup';
import { pipelineRunViews } from './run-views';
import { stageDecisions } from './run-decisions';

export interface PipelineTriggerInput {
  parameters: Record<string, string>;
  plan_hash?: string;
}

/** A stage as a new run records it: its definition now (a snapshot), pending; `hold`: the gate an agent's run waits at instead of none. */
const stageOfRun = (stage: Pipeline['stages'][number], deployment: Deployment, hold: typeof AGENT_HOLD_GATE | undefined) => ({
  name: stage.name,
  deployment_id: stage.deployment_id,
  deployment_name: deployment.name,
  // What its run will run, as the deployment is now: a change to it later is for later pipeline runs.
  definition: { steps: deployment.steps, strategy: deployment.strategy ?? null, rollback: deployment.rollback ?? null },
  needs: stage.needs,
  when: stage.when,
  gate: stage.gate ?? hold ?? null,
  parameters: stage.parameters,
  status: 'pending',
});

/**
 * Pipeline runs: triggered (the caller may run every stage's deployment; the plan reviewed, if named,
 * unchanged), read, cancelled, retried, and their stages' gates decided (run-decisions.ts). Each run's
 * workflow is `pipeline-run-<id>`; what it does to the run is the store's (domain/pipelines/runs.ts).
 */
export function createPipelineRunService({ workflows, secretBox, deployments, log }: { workflows: WorkflowGateway; secretBox: SecretBox; deployments: DeploymentService; log: Logger }) {
  const views = async (runs: PipelineRun[]) => pipelineRunViews(runs);
  const viewOf = async (run: PipelineRun) => (await views([run]))[0]!;
  const reread = async (run: PipelineRun) => viewOf((await PipelineRunModel.findById(run._id).lean<PipelineRun>())!);

  const start = (run: PipelineRun) =>
    unlessTemporalUnreachable('start the pipeline run', () =>
      workflows.pipelines.start({ runId: run._id.toString(), organizationId: run.organization_id.toString(), pipelineId: run.pipeline_id.toString(), pipelineName: run.pipeline_name, triggeredBy: run.triggered_by }, run.stages.length),
    );

  /** Stores the run (or finds the one an earlier request with the key stored) and starts its workflow. */
  async function store(principal: Principal, pipeline: Pipeline, key: string | undefined, digest: string, fields: Record<string, unknown>): Promise<{ run: PipelineRun; replayed: boolean }> {
    const earlier = async () => {
      if (!key) return null;
      const found = await PipelineRunModel.findOne({ pipeline_id: pipeline._id, idempotency_key: key }).lean<PipelineRun>();
      if (found && found.request_digest !== digest) throw new ApiError('conflict', 'This Idempotency-Key was used for a different request (other parameters, or another run retried): use a new key');
      // Starting again is harmless, and heals a first attempt that died before it started its workflow.
      if (found?.status === 'queued') await start(found);
      return found;
    };
    const existing = await earlier();
    if (existing) return { run: existing, replayed: true };
    let run: PipelineRun;
    try {
      run = (await PipelineRunModel.create({ ...fields, organization_id: pipeline.organization_id, pipeline_id: pipeline._id, pipeline_name: pipeline.name, triggered_by: recordedByOf(principal), token_id: principal.tokenId, actor: actorOf(principal), scopes: principal.scopes, idempotency_key: key ?? null, request_digest: digest })).toObject() as PipelineRun;
    } catch (error) {
      const found = isDuplicateKey(error) ? await earlier() : null;
      if (found) return { run: found, replayed: true };
      throw error;
    }
    try {
      await start(run);
    } catch (error) {
      await PipelineRunModel.deleteOne({ _id: run._id, status: 'queued' });
      throw error;
    }
    return { run, replayed: false };
  }

  return {
    /** What a trigger would run now: the graph and each stage's deployment plan, with the hash a trigger may name. */
    async plan(principal: Principal, pipelineId: string, input: PipelineTriggerInput) {
      const pipeline = await findPipeline(principal, pipelineId);
      const values = pipelineValues(pipeline, input);
      return pipelinePlanOf(pipeline, await runnableStages(principal, pipeline, deployments, false), values);
    },

    /**
     * `options.viaAgentDoor`: an agent's run, whose stages that change servers wait for a person
     * (agent-holds.ts); `options.schedule`: the schedule whose tick triggers it (src/api/schedules/ticks.ts).
     */
    async trigger(principal: Principal, pipelineId: string, key: string | undefined, input: PipelineTriggerInput, options: { viaAgentDoor?: boolean; schedule?: { id: Types.ObjectId; name: string; scheduled_at: Date } } = {}) {
      const pipeline = await findPipeline(principal, pipelineId);
      const values = pipelineValues(pipeline, input);
      const stages = await runnableStages(principal, pipeline, deployments);
      const { plan_hash } = pipelinePlanOf(pipeline, stages, values);
      assertPlanUnchanged(input.plan_hash, plan_hash);
      const digest = secretBox.digest(JSON.stringify(Object.keys(input.parameters).sort().map((name) => [name, input.parameters[name]])), 'pipeline-trigger');
      const holds = await agentHolds(principal, options.viaAgentDoor ?? false, stages);
      return store(principal, pipeline, key, digest, {
        parameters: storeParameters(values, secretBox, principal.organizationId),
        plan_hash,
        stages: stages.map(({ stage, deployment }) => stageOfRun(stage, deployment, holds.get(stage.name))),
        ...(options.schedule ? { schedule: options.schedule } : {}),
      });
    },

    /** A new run of a finished one that did not succeed: its succeeded stages kept (with their outputs), the others run again. */
    async retry(principal: Principal, pipelineId: string, runId: string, key: string | undefined, viaAgentDoor = false) {
      const pipeline = await findPipeline(principal, pipelineId);
      const original = await runOfPipeline(pipeline, runId);
      if (!FINAL_PIPELINE_RUN_STATUSES.includes(original.status as never)) throw new ApiError('conflict', `The pipeline run is still ${original.status}: retry it once it has finished`);
      if (original.status === 'success') throw new ApiError('conflict', 'The pipeline run succeeded: there is nothing to retry');
      const holds = await agentHolds(principal, viaAgentDoor, await runnableStages(principal, pipeline, deployments));
      const stages = original.stages.map((stage) => {
        const { status, outputs, output_conflicts, deployment_run_id, started_at, completed_at, kept_from, error, gate_state, ...definition } = stage;
        return status === 'success'
          ? { ...definition, status, outputs, output_conflicts, deployment_run_id, started_at, completed_at, kept_from: kept_from ?? original._id, error: null, gate_state }
          : { ...definition, gate: definition.gate ?? holds.get(stage.name) ?? null, status: 'pending' };
      });
      return store(principal, pipeline, key, secretBox.digest(original._id.toString(), 'pipeline-retry'), { parameters: original.parameters, plan_hash: original.plan_hash, retry_of: original._id, stages });
    },

    async list(principal: Principal, pipelineId: string, page: PageQuery) {
      const pipeline = await findPipeline(principal, pipelineId);
      const listed = await findPage(PipelineRunModel, { pipeline_id: pipeline._id }, page, (run: PipelineRun) => run);
      return { data: await views(listed.data), meta: listed.meta };
    },

    async get(principal: Principal, pipelineId: string, runId: string) {
      return viewOf(await runOfPipeline(await findPipeline(principal, pipelineId), runId));
    },

    /** Cancels a run: a queued one never begins; a running one has its stages' runs cancelled and what has not begun skipped (`always` stages still run). */
    async cancel(principal: Principal, pipelineId: string, runId: string) {
      const pipeline = await findPipeline(principal, pipelineId);
      const run = await runOfPipeline(pipeline, runId);
      if (FINAL_PIPELINE_RUN_STATUSES.includes(run.status as never)) throw new ApiError('conflict', `The pipeline run has already finished (${run.status})`);
      await runnableStages(principal, pipeline, deployments);
      const by = actorOf(principal);
      if (await cancelQueuedPipelineRun(run._id, by)) {
        workflows.pipelines.cancel(runId).catch((err: unknown) => log.warn({ err, runId }, 'could not cancel the workflow of a queued pipeline run; it ends when it begins'));
        return reread(run);
      }
      await requestPipelineCancel(run._id, by);
      const found = await unlessTemporalUnreachable('cancel', () => workflows.pipelines.cancel(runId));
      // Its workflow is gone (terminated by hand): nothing runs it any more.
      if (!found) await finishPipelineRun(runId, true);
      return reread(run);
    },

    ...stageDecisions({ workflows, deployments, reread }),
  };
}

/** The pipeline's parameters as given, else their defaults: 422 naming each problem. */
function pipelineValues(pipeline: Pipeline, input: PipelineTriggerInput) {
  const { values, problems } = resolveParameters(pipeline.parameters ?? [], input.parameters);
  if (problems.length) throw new ApiError('validation_failed', 'The parameters are invalid', problems);
  return values;
}

export type PipelineRunService = ReturnType<typeof createPipelineRunService>;
