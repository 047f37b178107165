import type { z } from 'zod';
import { ApiError } from './errors';

/** Parses request input with a zod schema; any issue becomes a 422 whose details name each field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, where = 'body'): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.join('.') : (issue.code === 'unrecognized_keys' ? issue.keys.join(',') : where),
    message: issue.code === 'unrecognized_keys' ? `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
  }));
  throw new ApiError('validation_failed', `The request ${where} is invalid`, details);
}
