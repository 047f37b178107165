import { z } from 'zod';
import { givenParametersSchema } from '../deployments/schemas';

/** A pipeline trigger's (and plan's) body: optional while the pipeline requires no parameter. */
export const pipelineTriggerSchema = z
  .strictObject({
    parameters: givenParametersSchema,
    plan_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'plan_hash is the 64 hexadecimal digits POST /pipelines/{id}/plan returned')
      .optional()
      .describe('The plan reviewed (POST /pipelines/{id}/plan’s `plan_hash`): if the graph or a stage’s plan changed since, 409 plan_changed and nothing starts'),
  })
  .default({ parameters: {} });

/** A stage's name in a path. */
export const stageNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'a stage name');
