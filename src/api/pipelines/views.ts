import { z } from 'zod';
import { actorView } from '../../domain/access/actor';
import { STAGE_WHEN, type Pipeline } from '../../domain/pipelines/model';
import { actorSchema } from '../access/views';
import { timestampSchema } from '../http/timestamps';
import { parameterDefinitionView, parameterDefinitionsOf } from '../deployments/views/deployments';
import { managedByView, managedByViewSchema } from '../ownership/views';

/* A pipeline's view: its definition, each stage's deployment by id and by its name now. */

const stageSchema = z
  .object({
    name: z.string(),
    deployment: z.object({ id: z.string(), name: z.string() }).describe('The deployment the stage runs (its name now)'),
    needs: z.array(z.string()).describe('The stages that end before it starts'),
    when: z.enum(STAGE_WHEN).describe('success: every stage it needs succeeded; failure: one of them failed; always: whatever happened'),
    gate: z.object({ approvals: z.number().int(), expires_in: z.string() }).nullable().describe('People approve before it starts (null: no gate)'),
    parameters: z.record(z.string(), z.string()).describe('Its deployment’s parameters, with their ${{ … }} expressions as written'),
  })
  .meta({ id: 'PipelineStage' });

export const pipelineSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    parameters: z.array(parameterDefinitionView).describe('What a run is given'),
    stages: z.array(stageSchema),
    created_by: actorSchema.nullable(),
    updated_by: actorSchema.nullable(),
    managed_by: managedByViewSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Pipeline' });

const warningSchema = z
  .object({ path: z.string(), message: z.string() })
  .meta({ id: 'DefinitionWarning', description: 'Likely a mistake, not refused: an output no step of its stage’s deployment seems to write (outputs are checked when the pipeline runs)' });

/** A definition's answer to a create or a change: the pipeline, and what looks wrong but only a run can tell. */
export const definedPipelineSchema = z.object({ data: pipelineSchema, warnings: z.array(warningSchema) });

/** The view of a pipeline; `deploymentNames` names each stage's deployment by id. */
export const toPipelineView = (p: Pipeline, deploymentNames: ReadonlyMap<string, string>): z.infer<typeof pipelineSchema> => ({
  id: p._id.toString(),
  name: p.name,
  description: p.description ?? null,
  parameters: parameterDefinitionsOf(p.parameters),
  stages: p.stages.map((s) => ({
    name: s.name,
    deployment: { id: s.deployment_id.toString(), name: deploymentNames.get(s.deployment_id.toString()) ?? '' },
    needs: [...s.needs],
    when: s.when as (typeof STAGE_WHEN)[number],
    gate: s.gate ? { approvals: s.gate.approvals, expires_in: s.gate.expires_in } : null,
    parameters: Object.fromEntries(s.parameters.map((p) => [p.name, p.value])),
  })),
  created_by: actorView(p.created_by),
  updated_by: actorView(p.updated_by),
  managed_by: managedByView(p.managed_by),
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});
