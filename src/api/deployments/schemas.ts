import { z } from 'zod';
import { objectIdSchema as objectId } from '../http/ids';

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


export const createDeploymentSchema = z.strictObject({
  name,
  server_id: objectId,
  steps: z.array(stepSchema).min(1, 'at least one step is required').max(MAX_STEPS, `at most ${MAX_STEPS} steps`),
});

export const updateDeploymentSchema = createDeploymentSchema
  .partial()
  .refine((v) => Object.keys(v).length > 0, 'send at least one of name, server_id, steps');

export type CreateDeploymentInput = z.infer<typeof createDeploymentSchema>;
export type UpdateDeploymentInput = z.infer<typeof updateDeploymentSchema>;

/** Idempotency-Key: printable ASCII, as most HTTP clients generate (UUIDs, CI job ids). */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'Idempotency-Key must be 1-200 printable ASCII characters without spaces');
