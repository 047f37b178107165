import { z } from 'zod';
import { dataOf, type Operation, type Parameter } from '../openapi/operation';
import { stepLogLinesSchema, stepLogMatchesSchema, stepLogQuerySchema, stepNumberSchema } from './step-log';

const DESCRIPTION =
  'A step’s whole output as stored (redacted, up to `STEP_LOG_LIMIT_BYTES` per step, kept `STEP_LOG_RETENTION_DAYS`), ' +
  'beyond the head and tail its run or conversation shows. Without `from`, the last `limit` lines; `?from=1201&limit=100` for lines 1201–1300; ' +
  '`?q=error` for the lines containing “error” (`StepLogMatches`); `?format=raw` for the whole text as a `text/plain` download.';

/** The operation of one step-log route (a run's step, a target's, a conversation's). */
export const stepLogOperation = (path: string, operationId: string, tag: string, params: Record<string, Parameter>): Operation => ({
  method: 'get', path, operationId, tag, scope: 'read',
  summary: 'Read a step’s whole log: lines by range, a search, or the raw text',
  description: DESCRIPTION,
  params,
  query: stepLogQuerySchema,
  responses: {
    200: {
      description: 'The lines (or the matches); with `format=raw`, the text itself',
      body: z.union([dataOf(stepLogLinesSchema), dataOf(stepLogMatchesSchema)]),
      alternatives: { 'text/plain': z.string().describe('`format=raw`: the whole log, as an attachment') },
    },
  },
  errors: ['not_found', 'validation_failed'],
});

export const stepNumberParam: Parameter = { schema: stepNumberSchema, description: 'The step’s number: 1 for the first' };
