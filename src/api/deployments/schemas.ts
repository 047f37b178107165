import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';
import { tagSchema } from '../servers/schemas';
import { MAX_PARAMETER_VALUE_LENGTH, PARAMETER_NAME } from '../../domain/deployments/parameters';

export const MAX_STEPS = 100;
export const MAX_COMMAND_LENGTH = 16 * 1024;

const stepSchema = z.strictObject({
  name: z.string().trim().min(1, 'name is required').max(120),
  command: z.string().min(1, 'command is required').max(MAX_COMMAND_LENGTH),
  timeout_seconds: z.number().int().min(1).max(24 * 3600).optional(),
  retries: z.number().int().min(0).max(10).default(0),
  continue_on_error: z.boolean().default(false),
});

const name = z
  .string()
  .trim()
  .min(1, 'name is required')
  .max(120);


export const MAX_TARGET_SERVERS = 10_000;

const targetsSchema = z
  .strictObject({
    server_ids: z.array(objectId).max(MAX_TARGET_SERVERS, `at most ${MAX_TARGET_SERVERS} servers`).optional(),
    tags: z.array(tagSchema).max(20, 'at most 20 tags').optional(),
  })
  .refine((t) => (t.server_ids?.length ?? 0) + (t.tags?.length ?? 0) > 0, 'give server_ids, tags, or both');

const percent = (min: number) =>
  z.string().regex(/^\d{1,3}%$/, 'a count, or a percentage such as "25%"').refine((v) => Number(v.slice(0, -1)) >= min && Number(v.slice(0, -1)) <= 100, `a percentage from ${min}% to 100%`);

export const strategySchema = z.strictObject({
  batch_size: z.union([z.number().int().min(1, 'batch_size is at least 1'), percent(1)]).optional(),
  max_failures: z.union([z.number().int().min(0, 'max_failures is at least 0'), percent(0)]).optional(),
});

const parameterSchema = z
  .strictObject({
    name: z.string().regex(PARAMETER_NAME, 'a parameter name is lowercase letters, digits and _ (starting with a letter), at most 63 characters'),
    description: z.string().max(500).optional(),
    default: z.string().max(MAX_PARAMETER_VALUE_LENGTH).optional(),
    required: z.boolean().default(false),
    secret: z.boolean().default(false),
    pattern: z
      .string()
      .min(1)
      .max(500)
      .refine((p) => {
        try {
          new RegExp(p, 'u');
          return true;
        } catch {
          return false;
        }
      }, 'pattern is not a valid regular expression')
      .optional(),
  })
  .refine((p) => !(p.secret && p.default !== undefined), { message: 'a secret parameter has no default (it would be stored in clear)', path: ['default'] })
  .refine((p) => !(p.required && p.default !== undefined), { message: 'a required parameter has no default', path: ['default'] })
  .refine((p) => p.default === undefined || !p.pattern || new RegExp(`^(?:${p.pattern})$`, 'u').test(p.default), { message: 'default does not match pattern', path: ['default'] });

const parametersSchema = z
  .array(parameterSchema)
  .max(50, 'at most 50 parameters')
  .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'parameter names must be unique');

const stepsSchema = z.array(stepSchema).min(1, 'at least one step is required').max(MAX_STEPS, `at most ${MAX_STEPS} steps`);

const definitionFields = {
  name,
  server_id: objectId.optional(),
  targets: targetsSchema.optional(),
  strategy: strategySchema.optional(),
  parameters: parametersSchema.optional(),
  steps: stepsSchema,
};

/** One server (`server_id`) or many (`targets`, with an optional `strategy`), never both. */
const oneKindOfTarget = (v: { server_id?: unknown; targets?: unknown; strategy?: unknown }, ctx: z.RefinementCtx, creating: boolean) => {
  if (v.server_id !== undefined && v.targets !== undefined) ctx.addIssue({ code: 'custom', path: ['targets'], message: 'give server_id (one server) or targets (many), not both' });
  else if (creating && v.server_id === undefined && v.targets === undefined) ctx.addIssue({ code: 'custom', path: ['server_id'], message: 'give server_id (one server) or targets (many)' });
  if (v.strategy !== undefined && v.server_id !== undefined) ctx.addIssue({ code: 'custom', path: ['strategy'], message: 'strategy applies to targets, not to one server_id' });
};

export const createDeploymentSchema = z.strictObject(definitionFields).superRefine((v, ctx) => oneKindOfTarget(v, ctx, true));

export const updateDeploymentSchema = z
  .strictObject({ ...definitionFields, name: name.optional(), steps: stepsSchema.optional() })
  .refine((v) => Object.keys(v).length > 0, 'send at least one of name, server_id, targets, strategy, parameters, steps')
  .superRefine((v, ctx) => oneKindOfTarget(v, ctx, false));

export type CreateDeploymentInput = z.infer<typeof createDeploymentSchema>;
export type UpdateDeploymentInput = z.infer<typeof updateDeploymentSchema>;

/** A trigger's (and a plan's) body: optional while the deployment requires no parameter. */
export const triggerSchema = z
  .strictObject({
    parameters: z
      .record(
        z.string().regex(PARAMETER_NAME, 'a parameter name is lowercase letters, digits and _'),
        z.string().max(MAX_PARAMETER_VALUE_LENGTH).refine((v) => !v.includes('\0'), 'a value cannot hold a NUL character'),
        { error: 'parameters values are strings' },
      )
      .default({}),
  })
  .default({ parameters: {} });

export type TriggerInput = z.infer<typeof triggerSchema>;

/** Idempotency-Key: printable ASCII, as most HTTP clients generate (UUIDs, CI job ids). */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'Idempotency-Key must be 1-200 printable ASCII characters without spaces');
