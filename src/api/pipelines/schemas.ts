import { z } from 'zod';
import { MAX_STAGES, STAGE_WHEN } from '../../domain/pipelines/model';
import { MAX_PARAMETER_VALUE_LENGTH, PARAMETER_NAME } from '../../domain/deployments/parameters';
import { MAX_APPROVALS, parametersSchema } from '../deployments/schemas';
import { durationSchema } from '../http/durations';
import { requiredText, text } from '../http/text';
import { forceField } from '../ownership/guard';

/* A pipeline's definition as a request gives it; what needs the other stages or the database is judged in definition-checks.ts. */

const STAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** A stage's gate: as a fleet run's gates are judged (approvals, expiry), before the stage starts. */
const stageGateSchema = z.strictObject({
  approvals: z.number().int().min(1, 'approvals is at least 1').max(MAX_APPROVALS, `approvals is at most ${MAX_APPROVALS}`).describe('How many distinct people must approve (never the person who triggered the run, never a service account)'),
  expires_in: durationSchema.default('24h').describe('How long the gate waits before the stage fails ("approval expired after …")'),
});

const stageSchema = z.strictObject({
  name: z.string().regex(STAGE_NAME, 'a stage name is letters, digits, _ and - (starting with a letter or a digit), at most 63 characters'),
  deployment: requiredText('deployment', 120).describe('A deployment of the organization, by name or id'),
  needs: z.array(z.string()).max(MAX_STAGES).default([]).describe('The stages that must end before this one starts (each defined above it)'),
  when: z.enum(STAGE_WHEN, { error: `when is one of ${STAGE_WHEN.map((w) => `"${w}"`).join(', ')}` }).default('success')
    .describe('success: every stage it needs succeeded; failure: one of them failed; always: whatever happened'),
  gate: stageGateSchema.nullable().optional().describe('People approve before the stage starts (null: no gate)'),
  parameters: z
    .record(z.string().regex(PARAMETER_NAME, 'a parameter name is lowercase letters, digits and _'), text('a value', { max: MAX_PARAMETER_VALUE_LENGTH }), { error: 'parameters values are strings' })
    .default({})
    .describe('Its deployment’s parameters: text with ${{ pipeline.parameters.NAME }} and ${{ stages.STAGE.outputs.NAME }} expressions'),
});

const stagesSchema = z.array(stageSchema).min(1, 'at least one stage is required').max(MAX_STAGES, `at most ${MAX_STAGES} stages`);

const definitionFields = {
  name: requiredText('name', 120),
  description: text('description', { max: 2000 }).nullable().optional(),
  parameters: parametersSchema.optional().describe('What a run is given, as a deployment’s parameters are declared'),
  stages: stagesSchema,
};

export const createPipelineSchema = z.strictObject(definitionFields);

export const updatePipelineSchema = z
  .strictObject({ ...definitionFields, name: definitionFields.name.optional(), stages: stagesSchema.optional(), force: forceField })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'send at least one of name, description, parameters, stages')
  .meta({ minProperties: 1 });

export type CreatePipelineInput = z.infer<typeof createPipelineSchema>;
export type UpdatePipelineInput = z.infer<typeof updatePipelineSchema>;
export type StageInput = CreatePipelineInput['stages'][number];
