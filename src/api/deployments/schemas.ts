import { validate } from '../http/validation';
import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';
import { tagSchema } from '../servers/schemas';
import { MAX_PARAMETER_VALUE_LENGTH, PARAMETER_NAME, wholeValuePattern } from '../../domain/deployments/parameters';
import { durationSchema } from '../http/durations';
import { requiredText, text } from '../http/text';
import { overrideFreezeSchema } from '../freezes/enforce';
import { forceField } from '../ownership/guard';

export const MAX_STEPS = 100;
export const MAX_COMMAND_LENGTH = 16 * 1024;

export const stepSchema = z.strictObject({
  name: requiredText('name', 120),
  command: text('command', { min: 1, max: MAX_COMMAND_LENGTH }),
  timeout_seconds: z.number().int().min(1).max(24 * 3600).optional(),
  retries: z.number().int().min(0).max(10).default(0),
  continue_on_error: z.boolean().default(false),
});

const name = requiredText('name', 120);

export const MAX_TARGET_SERVERS = 10_000;

/** Targets whose servers are given as `servers` (ids in a request, titles in config files). */
export const targetsOf = <F extends string, S extends z.ZodType<string>>(field: F, servers: S) =>
  z
    .strictObject({
      [field]: z.array(servers).max(MAX_TARGET_SERVERS, `at most ${MAX_TARGET_SERVERS} servers`).optional(),
      tags: z.array(tagSchema).max(20, 'at most 20 tags').optional(),
    } as Record<F, z.ZodOptional<z.ZodArray<S>>> & { tags: z.ZodOptional<z.ZodArray<typeof tagSchema>> })
    .refine((t) => ((t as Record<string, unknown[] | undefined>)[field]?.length ?? 0) + ((t as { tags?: unknown[] }).tags?.length ?? 0) > 0, `give ${field}, tags, or both`);

const targetsSchema = targetsOf('server_ids', objectId)
  // The refinement, as the document states it.
  .meta({ anyOf: [{ required: ['server_ids'], properties: { server_ids: { minItems: 1 } } }, { required: ['tags'], properties: { tags: { minItems: 1 } } }] });

/** "25%": a percentage from 1% (or 0%) to 100%. */
const percent = (min: 0 | 1) => z.string().regex(min === 1 ? /^(?:100|[1-9][0-9]?)%$/ : /^(?:100|[1-9]?[0-9])%$/, `a count, or a percentage from ${min}% to 100% such as "25%"`);

export const MAX_APPROVALS = 10;

const gateSchema = z.strictObject({
  before_batch: z.number().int().min(1, 'before_batch is at least 1 (1: before anything runs)').optional().describe('With batch_size: 1: before anything runs; N: after batch N-1 (a canary), before batch N'),
  before_target: z
    .number()
    .int()
    .min(1, 'before_target is at least 1 (1: before anything runs)')
    .optional()
    .describe('With max_concurrency: the N-th target in order (1-based) does not start until the gate is approved; the targets before it have finished by then (a canary of 5: 6)'),
  approvals: z.number().int().min(1, 'approvals is at least 1').max(MAX_APPROVALS, `approvals is at most ${MAX_APPROVALS}`).describe('How many distinct people must approve (never the person who triggered the run, never a service account)'),
  expires_in: durationSchema.default('24h').describe('How long the gate waits before the run fails ("approval expired after …")'),
});

export const healthCheckSchema = z
  .strictObject({
    command: text('health_check.command', { min: 1, max: MAX_COMMAND_LENGTH }).describe('Run on each target of a batch once its steps succeeded; exit 0 is healthy'),
    soak_seconds: z.number().int().min(0).max(24 * 3600).default(0).describe('How long to wait after the batch (in a window: after the target’s steps, its slot held) before checking (a durable timer)'),
    timeout_seconds: z.number().int().min(1).max(3600).default(10).describe('One attempt longer than this fails (its command is stopped)'),
    retries: z.number().int().min(0).max(20).default(0).describe('Attempts after the first before the target is failed'),
    interval_seconds: z.number().int().min(0).max(3600).default(5).describe('Between attempts'),
  })
  .refine((h) => h.command.trim().length > 0, { message: 'health_check.command must not be empty', path: ['command'] });

/** A window run's gates stand before a target, a batched run's before a batch: each gate names the one its strategy has. */
function gatesFitTheStrategy(strategy: { batch_size?: unknown; max_concurrency?: unknown; gates?: Array<{ before_batch?: number; before_target?: number }> }, ctx: z.RefinementCtx) {
  const window = strategy.max_concurrency !== undefined;
  if (window && strategy.batch_size !== undefined) ctx.addIssue({ code: 'custom', path: ['max_concurrency'], message: 'give batch_size (fixed batches) or max_concurrency (a rolling window), not both' });
  const [own, other] = window ? (['before_target', 'before_batch'] as const) : (['before_batch', 'before_target'] as const);
  for (const [index, gate] of (strategy.gates ?? []).entries()) {
    if (gate[other] !== undefined) {
      const message = window ? 'before_batch applies to batches: with max_concurrency a gate stands before_target' : 'before_target applies to a rolling window (max_concurrency): with batches a gate stands before_batch';
      ctx.addIssue({ code: 'custom', path: ['gates', index, other], message });
    } else if (gate[own] === undefined) ctx.addIssue({ code: 'custom', path: ['gates', index, own], message: `${own} is required` });
  }
  const places = (strategy.gates ?? []).map((gate) => gate[own]).filter((place) => place !== undefined);
  if (new Set(places).size !== places.length) ctx.addIssue({ code: 'custom', path: ['gates'], message: `one gate per place: ${own} values must be unique` });
}

export const strategySchema = z
  .strictObject({
    batch_size: z.union([z.number().int().min(1, 'batch_size is at least 1'), percent(1)]).optional().describe('Fixed batches: this many targets (or this percentage of them) at once, each batch waiting for the one before'),
    max_concurrency: z
      .union([z.number().int().min(1, 'max_concurrency is at least 1'), percent(1)])
      .optional()
      .describe('A rolling window instead of batches: at most this many targets (or this percentage of them) run at once, and a finished target’s slot is taken by the next at once. Not with batch_size'),
    max_failures: z
      .union([z.number().int().min(0, 'max_failures is at least 0'), percent(0)])
      .optional()
      .describe('How many targets may fail (or what percentage of them) before no new batch — or, in a window, no new target — starts; the run fails if any target failed'),
    gates: z
      .array(gateSchema)
      .max(20, 'at most 20 gates')
      .optional()
      .describe('Approval gates: the run waits before batch `before_batch` (or, with max_concurrency, before target `before_target`) until `approvals` people approve'),
    health_check: healthCheckSchema
      .optional()
      .describe('A check run on each target after its steps succeeded (after its batch, or in a window as the target finishes): a target whose check still fails after its retries is failed'),
  })
  .superRefine(gatesFitTheStrategy)
  // The refinement's first rule, as the document states it.
  .meta({ not: { required: ['batch_size', 'max_concurrency'] } });

/** JSON Schema: `flag` is true and `other` is given. */
const exactlyTrue = (flag: string, other: string) => ({ required: [flag, other], properties: { [flag]: { const: true } } });

const parameterSchema = z
  .strictObject({
    name: z.string().regex(PARAMETER_NAME, 'a parameter name is lowercase letters, digits and _ (starting with a letter), at most 63 characters'),
    description: text('description', { max: 500 }).optional(),
    default: text('default', { max: MAX_PARAMETER_VALUE_LENGTH }).optional(),
    required: z.boolean().default(false),
    secret: z.boolean().default(false),
    pattern: text('pattern', { min: 1, max: 500 })
      .refine((p) => wholeValuePattern(p) !== null, 'pattern is not a valid regular expression')
      .optional(),
  })
  .refine((p) => !(p.secret && p.default !== undefined), { message: 'a secret parameter has no default (it would be stored in clear)', path: ['default'] })
  .refine((p) => !(p.required && p.default !== undefined), { message: 'a required parameter has no default', path: ['default'] })
  // An invalid pattern is reported by its own check (above), not here.
  .refine((p) => p.default === undefined || p.pattern === undefined || (wholeValuePattern(p.pattern)?.test(p.default) ?? true), { message: 'default does not match pattern', path: ['default'] })
  // The first two refinements, as the document states them (the third, and a valid pattern, no schema can state).
  .meta({ not: { anyOf: [exactlyTrue('secret', 'default'), exactlyTrue('required', 'default')] } });

export const parametersSchema = z
  .array(parameterSchema)
  .max(50, 'at most 50 parameters')
  .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'parameter names must be unique');

export const stepsSchema = z.array(stepSchema).min(1, 'at least one step is required').max(MAX_STEPS, `at most ${MAX_STEPS} steps`);

/** Steps that undo a halted fleet run, on every server it touched (with BOSUN_ROLLBACK_REASON). */
export const rollbackSchema = z.strictObject({
  steps: z.array(stepSchema).min(1, 'at least one rollback step is required').max(MAX_STEPS, `at most ${MAX_STEPS} steps`),
  automatic: z.boolean().default(true).describe('true: run as soon as the run halts; false: only on request (POST …/rollback)'),
});

export const definitionFields = {
  name,
  server_id: objectId.optional(),
  targets: targetsSchema.optional(),
  strategy: strategySchema.optional(),
  rollback: rollbackSchema.nullable().optional().describe('Steps run on every server a halted fleet run touched, newest batch first (null: none)'),
  parameters: parametersSchema.optional(),
  steps: stepsSchema,
};

/** One server (`server_id`; `server` in config files) or many (`targets`, with an optional `strategy`), never both. */
export const oneKindOfTarget = (v: { targets?: unknown; strategy?: unknown; rollback?: unknown }, ctx: z.RefinementCtx, creating: boolean, one = 'server_id') => {
  const server = (v as Record<string, unknown>)[one];
  if (server !== undefined && v.targets !== undefined) ctx.addIssue({ code: 'custom', path: ['targets'], message: `give ${one} (one server) or targets (many), not both` });
  else if (creating && server === undefined && v.targets === undefined) ctx.addIssue({ code: 'custom', path: [one], message: `give ${one} (one server) or targets (many)` });
  if (v.strategy !== undefined && server !== undefined) ctx.addIssue({ code: 'custom', path: ['strategy'], message: `strategy applies to targets, not to one ${one}` });
  if (v.rollback && server !== undefined) ctx.addIssue({ code: 'custom', path: ['rollback'], message: `rollback applies to targets (a fleet run), not to one ${one}` });
};

export const createDeploymentSchema = z
  .strictObject(definitionFields)
  .superRefine((v, ctx) => oneKindOfTarget(v, ctx, true))
  // The refinement, as the document states it.
  .meta({ oneOf: [{ required: ['server_id'] }, { required: ['targets'] }], not: { anyOf: [{ required: ['server_id', 'strategy'] }, { required: ['server_id', 'rollback'] }] } });

export const updateDeploymentSchema = z
  .strictObject({ ...definitionFields, name: name.optional(), steps: stepsSchema.optional(), force: forceField })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'send at least one of name, server_id, targets, strategy, parameters, steps')
  .superRefine((v, ctx) => oneKindOfTarget(v, ctx, false))
  // The refinements, as the document states them.
  .meta({ minProperties: 1, not: { anyOf: [{ required: ['server_id', 'targets'] }, { required: ['server_id', 'strategy'] }, { required: ['server_id', 'rollback'] }] } });

export type CreateDeploymentInput = z.infer<typeof createDeploymentSchema>;
export type UpdateDeploymentInput = z.infer<typeof updateDeploymentSchema>;

/** A trigger's (and a plan's) body: optional while the deployment requires no parameter. */
/** A trigger's parameters, name → value (a deployment's, or a pipeline's). */
export const givenParametersSchema = z
  .record(
    z.string().regex(PARAMETER_NAME, 'a parameter name is lowercase letters, digits and _'),
    text('a value', { max: MAX_PARAMETER_VALUE_LENGTH }).regex(/^[^\u0000]*$/, 'a value cannot hold a NUL character'),
    { error: 'parameters values are strings' },
  )
  .default({});

export const triggerSchema = z
  .strictObject({
    parameters: givenParametersSchema,
    plan_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'plan_hash is the 64 hexadecimal digits POST /plan returned')
      .optional()
      .describe('The plan reviewed (POST /plan’s `plan_hash`): if the plan changed since, 409 plan_changed and nothing starts'),
    override_freeze: overrideFreezeSchema.optional(),
  })
  .default({ parameters: {} });

/** A retry's body: optional (an override of the freezes that cover its servers). */
export const retrySchema = z.strictObject({ override_freeze: overrideFreezeSchema.optional() }).default({});
export type RetryInput = z.infer<typeof retrySchema>;

/** An approval's body. */
export const approveSchema = z.strictObject({ comment: text('comment', { max: 2000 }).optional() }).default({});
/** A rejection's body: why. */
export const rejectSchema = z.strictObject({ reason: requiredText('reason', 2000) });
/** A rollback asked for: why (BOSUN_ROLLBACK_REASON; default: the run's error). */
export const rollbackRequestSchema = z.strictObject({ reason: requiredText('reason', 2000).optional() }).default({});
/** A pause's body: why. */
export const pauseSchema = z.strictObject({ reason: requiredText('reason', 2000) });

export type TriggerInput = z.infer<typeof triggerSchema>;

/** Idempotency-Key: printable ASCII, as most HTTP clients generate (UUIDs, CI job ids). */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'Idempotency-Key must be 1-200 printable ASCII characters without spaces');

/** A trigger's or a retry's Idempotency-Key header, if it has one (a deployment's or a pipeline's). */
export function idempotencyKeyOf(req: { get(name: string): string | undefined }): string | undefined {
  const header = req.get('Idempotency-Key');
  return header === undefined ? undefined : validate(idempotencyKeySchema, header, 'Idempotency-Key header');
}
