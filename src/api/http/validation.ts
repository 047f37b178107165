import '../../domain/zod-messages';
import type { z } from 'zod';
import { ApiError, type ErrorDetail } from './errors';

/** A zod error's issues as a 422's details, each naming its field (`where` when it names none). */
export function issueDetails(error: z.ZodError, where = 'body'): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.join('.') : (issue.code === 'unrecognized_keys' ? issue.keys.join(',') : where),
    message: issue.code === 'unrecognized_keys' ? `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
  }));
}

/** Parses request input with a zod schema; any issue becomes a 422 whose details name each field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown, where = 'body'): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new ApiError('validation_failed', `The request ${where} is invalid`, issueDetails(result.error, where));
}
