import { z } from 'zod';
import { requiredText } from '../../http/text';
import { oneKind, oneKindMessage, scheduleFields } from '../../schedules/schemas';

/* A schedule's spec as config files write it: the create body, with what it runs and run_as by name. */

const { name: _name, run_as: _runAs, ...timing } = scheduleFields;

export const scheduleFileSchema = z
  .strictObject({
    deployment: requiredText('deployment', 120).optional().describe('The deployment each tick runs, by name'),
    pipeline: requiredText('pipeline', 120).optional().describe('The pipeline each tick runs (a pipeline run), by name'),
    ...timing,
    run_as: z
      .string({ error: (issue) => (issue.input === undefined ? 'run_as is required in files: the service account each tick runs as, by name' : undefined) })
      .pipe(requiredText('run_as', 64))
      .describe('The service account each tick runs as, by name'),
  })
  .refine(oneKind, oneKindMessage)
  // What it runs is judged by check() (with the references), so a spec with other problems still hears of it.
  .meta({ oneOf: [{ required: ['deployment'] }, { required: ['pipeline'] }] });

export const ownerProblem = (spec: Record<string, unknown>) =>
  (spec.deployment === undefined) === (spec.pipeline === undefined) ? [{ path: ['deployment'], message: 'give either deployment or pipeline (not both)' }] : [];

export type ScheduleSpec = z.infer<typeof scheduleFileSchema>;
