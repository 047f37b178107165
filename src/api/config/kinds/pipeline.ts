import { Types } from 'mongoose';
import type { z } from 'zod';
import type { KindAdapter, ManagedBy, NameIndex, SpecPath } from '../../../domain/config/types';
import { FINAL_PIPELINE_RUN_STATUSES, PipelineModel, PipelineRunModel, type Pipeline } from '../../../domain/pipelines/model';
import { deletePipeline } from '../../../domain/pipelines/store';
import { deleteSchedulesOf } from '../../../domain/schedules/store';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';
import { actorOf } from '../../../domain/tokens/service';
import { checkStages, looseDefinitionSchema } from '../../pipelines/definition-checks';
import { createPipelineSchema } from '../../pipelines/schemas';
import { canonicalParameter } from './deployment';
import { checked, dropRemovedSchedules, issueProblems, nameOr, present, referenceResolver, refused, writeDocument, type RemovedSchedules } from './references-a';

/*
 * Pipelines in config files: the create body as it is (a stage names its deployment by name); the
 * API's checks of the stages together (needs, cycles, when, expressions) run on it unchanged.
 */

export const pipelineFileSchema = createPipelineSchema.omit({ name: true });

type Spec = z.infer<typeof pipelineFileSchema>;

interface Shape {
  description?: string | null;
  parameters?: Spec['parameters'] | Pipeline['parameters'] | null;
  stages: ReadonlyArray<{ name: string; deployment: string; needs?: readonly string[]; when?: string; gate?: { approvals: number; expires_in?: string | null } | null; parameters?: Record<string, string> }>;
}

function canonical(p: Shape): Record<string, unknown> {
  return {
    ...present('description', p.description),
    ...present('parameters', p.parameters?.map(canonicalParameter)),
    stages: p.stages.map((s) => ({
      name: s.name,
      deployment: s.deployment,
      needs: [...(s.needs ?? [])],
      when: s.when ?? 'success',
      ...(s.gate ? { gate: { approvals: s.gate.approvals, expires_in: s.gate.expires_in ?? '24h' } } : {}),
      parameters: { ...(s.parameters ?? {}) },
    })),
  };
}

const asShape = (p: Pipeline, names: NameIndex): Shape => ({
  description: p.description,
  parameters: p.parameters,
  stages: p.stages.map((s) => ({
    name: s.name,
    deployment: nameOr(names, 'Deployment', s.deployment_id),
    needs: s.needs,
    when: s.when,
    gate: s.gate,
    parameters: Object.fromEntries(s.parameters.map((p) => [p.name, p.value])),
  })),
});

/** The API's problem paths (`stages.1.needs.0`) as spec paths. */
const specPath = (path: string): SpecPath => path.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));

export function pipelineKind({ schedules }: { schedules: Pick<ScheduleWorkflows, 'remove'> }): KindAdapter {
  const removedSchedules: RemovedSchedules = new Map();
  return {
    kind: 'Pipeline',
    fileSchema: pipelineFileSchema,

    async current(organizationId, names) {
      const pipelines = await PipelineModel.find({ organization_id: organizationId }).sort({ name: 1 }).lean<Pipeline[]>();
      return pipelines.map((p) => ({ id: p._id.toString(), name: p.name, spec: canonical(asShape(p, names)), managed_by: (p as { managed_by?: ManagedBy | null }).managed_by ?? null }));
    },

    async check(spec, context) {
      const parsed = pipelineFileSchema.safeParse(spec);
      const definition = looseDefinitionSchema.parse(spec);
      const references = referenceResolver(context.names);
      definition.stages.forEach((stage, i) => stage?.deployment && references.id('Deployment', stage.deployment, ['stages', i, 'deployment']));
      const problems = [
        ...(parsed.success ? [] : issueProblems(parsed.error)),
        ...checkStages(definition).problems.map((p) => ({ path: specPath(p.path), message: p.message })),
        ...references.problems,
      ];
      return problems.length || !parsed.success ? refused(problems) : checked(canonical(parsed.data));
    },

    async write(context, object) {
      const spec = pipelineFileSchema.parse(object.spec);
      const by = actorOf(context.principal);
      const stages = spec.stages.map((s) => {
        const id = context.names.idOf('Deployment', s.deployment);
        if (!id) throw new Error(`no deployment named "${s.deployment}"`);
        return { name: s.name, deployment_id: new Types.ObjectId(id), needs: s.needs, when: s.when, gate: s.gate ?? null, parameters: Object.entries(s.parameters).map(([name, value]) => ({ name, value })) };
      });
      const fields = { description: spec.description ?? null, parameters: spec.parameters ?? [], stages, updated_by: by };
      await writeDocument(PipelineModel, context, object, fields, { created_by: by });
    },

    /** As the API's delete: its schedules and its run history go with it. */
    async remove({ session }, id) {
      const pipelineId = new Types.ObjectId(id);
      removedSchedules.set(id, await deleteSchedulesOf({ pipeline_id: pipelineId }, session));
      await deletePipeline(pipelineId, session);
    },

    async pruneBlocker(organizationId, id) {
      const going = await PipelineRunModel.findOne({ organization_id: organizationId, pipeline_id: id, status: { $nin: FINAL_PIPELINE_RUN_STATUSES } }, { status: 1 }).lean();
      return going ? `a run of it is ${going.status} (${going._id.toString()}): cancel it or let it finish first` : null;
    },

    async afterApply(_organizationId, { removed }) {
      await dropRemovedSchedules(removed, removedSchedules, schedules);
    },
  };
}
