import type { Actor } from '../../domain/access/actor';
import { isDuplicateKey } from '../../domain/database';
import { FINAL_PIPELINE_RUN_STATUSES, PipelineModel, PipelineRunModel, type Pipeline } from '../../domain/pipelines/model';
import { createPipeline, deletePipeline, redefinePipeline, type PipelineDefinition } from '../../domain/pipelines/store';
import { deleteSchedulesOf, managedSchedulesOf } from '../../domain/schedules/store';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { checkPipeline, readablePipelineFilter } from '../access/gate';
import { ApiError, notFound } from '../http/errors';
import { findPage, type PageQuery } from '../http/pagination';
import { looseDefinitionSchema, type LooseDefinition } from './definition-checks';
import { judgeDefinition, storedStage } from './judge';
import { deploymentNamesOf, findPipeline, stageDeployments } from './lookup';
import { createPipelineSchema, updatePipelineSchema, type StageInput } from './schemas';
import type { StageDeploymentDoc } from './stage-deployments';
import { toPipelineView } from './views';
import { checkOwnedWith, checkOwnership } from '../ownership/guard';

/*
 * Pipelines' definitions: list, read, define, change, delete. Defining one needs `deployments:write`
 * on every stage's deployment, as defining those deployments does; a change applies to later runs.
 */

const duplicateName = (name: string) => new ApiError('conflict', `A pipeline named "${name}" already exists in this organization`);

async function viewOf(pipeline: Pipeline) {
  return toPipelineView(pipeline, await deploymentNamesOf([pipeline]));
}

/** A stored pipeline's stages and parameters as a definition is judged (a change that leaves them is judged with them). */
const asDefinition = (pipeline: Pipeline): LooseDefinition => ({
  parameters: pipeline.parameters.map((p) => ({ name: p.name })),
  stages: pipeline.stages.map((s) => ({
    name: s.name,
    deployment: s.deployment_id.toString(),
    needs: [...s.needs],
    when: s.when,
    parameters: Object.fromEntries(s.parameters.map((p) => [p.name, p.value])),
  })),
});

export function pipelineDefinitions(schedulesDeleted: (ids: string[]) => Promise<void>) {
  /** The stages as stored, once the caller may write every stage's deployment (403 naming the first it may not). */
  async function writableStages(principal: Principal, stages: readonly StageInput[], deploymentOf: (reference: string) => StageDeploymentDoc) {
    const stored = stages.map((stage) => storedStage(stage, deploymentOf(stage.deployment)));
    await checkPipeline(principal, await stageDeployments(stored), 'deployments:write');
    return stored;
  }

  return {
    /** The pipelines the caller may read every stage's deployment of. */
    async list(principal: Principal, page: PageQuery) {
      const listed = await findPage(PipelineModel, await readablePipelineFilter(principal), page, (p: Pipeline) => p);
      const names = await deploymentNamesOf(listed.data);
      return { ...listed, data: listed.data.map((p) => toPipelineView(p, names)) };
    },

    async get(principal: Principal, id: string) {
      return viewOf(await findPipeline(principal, id));
    },

    async create(principal: Principal, body: unknown) {
      const { input, deploymentOf, warnings } = await judgeDefinition(principal, createPipelineSchema, body, looseDefinitionSchema.parse(body));
      const definition: PipelineDefinition = {
        name: input.name,
        description: input.description ?? null,
        parameters: input.parameters ?? [],
        stages: await writableStages(principal, input.stages, deploymentOf),
      };
      try {
        return { data: await viewOf(await createPipeline(principal.organizationId, definition, actorOf(principal) as Actor)), warnings };
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name);
        throw error;
      }
    },

    /** Runs triggered before keep the stages they were triggered with. */
    async update(principal: Principal, id: string, body: unknown) {
      const pipeline = await findPipeline(principal, id, 'deployments:write');
      const force = (body as { force?: unknown } | null)?.force === true;
      const forced = checkOwnership(principal, { kind: 'Pipeline', name: pipeline.name, managedBy: pipeline.managed_by }, { force });
      const given = looseDefinitionSchema.parse(body);
      const sent = (field: string) => typeof body === 'object' && body !== null && Object.hasOwn(body, field);
      const current = asDefinition(pipeline);
      const definition = { parameters: sent('parameters') ? given.parameters : current.parameters, stages: sent('stages') ? given.stages : current.stages };
      const { input, deploymentOf, warnings } = await judgeDefinition(principal, updatePipelineSchema, body, definition);
      const changes: Partial<PipelineDefinition> = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.parameters !== undefined ? { parameters: input.parameters } : {}),
        ...(input.stages !== undefined ? { stages: await writableStages(principal, input.stages, deploymentOf) } : {}),
      };
      try {
        const changed = await redefinePipeline(pipeline._id, changes, actorOf(principal) as Actor, forced);
        if (!changed) throw notFound('Pipeline');
        return { data: await viewOf(changed), warnings };
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name!);
        throw error;
      }
    },

    async remove(principal: Principal, id: string, force = false) {
      const pipeline = await findPipeline(principal, id, 'deployments:write');
      checkOwnership(principal, { kind: 'Pipeline', name: pipeline.name, managedBy: pipeline.managed_by }, { force, deleting: true });
      // Its runs' history goes with it, so one still going is finished (or cancelled) first.
      const going = await PipelineRunModel.findOne({ pipeline_id: pipeline._id, status: { $nin: FINAL_PIPELINE_RUN_STATUSES } }, { _id: 1, status: 1 }).lean();
      if (going) throw new ApiError('conflict', `A run of this pipeline is ${going.status} (${going._id.toString()}): cancel it or let it finish first`);
      // Its schedules go with it: their documents, then their Temporal Schedules (the worker's reconcile removes any left).
      checkOwnedWith(principal, await managedSchedulesOf({ pipeline_id: pipeline._id }), { force });
      const schedules = await deleteSchedulesOf({ pipeline_id: pipeline._id });
      await deletePipeline(pipeline._id);
      await schedulesDeleted(schedules).catch(() => undefined);
    },
  };
}

export type PipelineDefinitions = ReturnType<typeof pipelineDefinitions>;
