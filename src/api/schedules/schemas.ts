import { z } from 'zod';
import { parseDuration } from '../../domain/time/durations';
import { OVERLAP_POLICIES } from '../../domain/schedules/model';
import { cronProblem, isTimeZone } from '../../domain/time/cron';
import { durationSchema } from '../http/durations';
import { text } from '../http/text';
import { forceField } from '../ownership/guard';

export const MAX_CATCH_UP_SECONDS = 7 * 86_400;
export const MAX_JITTER_SECONDS = 3600;

/** A duration's seconds; NaN for one that is no duration (its own check then says so: zod runs both). */
const seconds = (value: string) => {
  try {
    return parseDuration(value);
  } catch {
    return Number.NaN;
  }
};

const cronSchema = z
  .string()
  .max(200)
  .regex(/^\s*[0-9*,/A-Za-z?LW#-]+(\s+[0-9*,/A-Za-z?LW#-]+){4}\s*$/, 'five fields: minute hour day-of-month month day-of-week')
  .superRefine((value, ctx) => {
    const problem = cronProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('Five fields: minute hour day-of-month month day-of-week ("30 2 * * 1-5"), in time_zone');

// Its lower bound is the setting SCHEDULE_MIN_INTERVAL_SECONDS (a minute by default), checked by the service (writes.ts).
const everySchema = durationSchema.describe('An interval instead of a cron expression: "15m", "6h", "1d" (at least 1 minute, or the setting SCHEDULE_MIN_INTERVAL_SECONDS)');

const timeZoneSchema = z
  .string()
  .max(64)
  .refine(isTimeZone, { message: 'an IANA time zone such as "Europe/Berlin", "America/New_York" or "UTC"' })
  .describe('The IANA time zone the cron expression is read in, and next_runs are shown in');

const catchUpSchema = durationSchema
  .refine((value) => Number.isNaN(seconds(value)) || (seconds(value) >= 10 && seconds(value) <= MAX_CATCH_UP_SECONDS), { message: 'catch_up_window is between 10s and 7d' })
  .describe('How late a tick may still run after Bosun (or Temporal) was down: older ones are recorded as missed');

const jitterSchema = durationSchema
  .refine((value) => !(seconds(value) > MAX_JITTER_SECONDS), { message: 'jitter is at most 1h' })
  .describe('Each tick runs up to this much later, at random: spreads schedules that share a time');

const nameSchema = text('name', { min: 1, max: 64 }).regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'a name of letters, digits, spaces, ".", "_" and "-"');

/** A schedule's fields as its create body gives them (config files name what it runs and run_as by name). */
export const scheduleFields = {
  name: nameSchema,
  cron: cronSchema.optional(),
  every: everySchema.optional(),
  time_zone: timeZoneSchema,
  parameters: z.record(z.string(), z.string()).default({}).describe('The deployment’s parameters each tick runs with (secret ones are sealed, never shown)'),
  overlap: z.enum(OVERLAP_POLICIES).default('skip').describe('A tick while the last tick’s run is still going: skip it (default), buffer one, cancel the other, or allow all'),
  catch_up_window: catchUpSchema.default('5m'),
  jitter: jitterSchema.nullable().default(null),
  paused: z.boolean().default(false),
  note: text('note', { max: 500 }).nullable().default(null),
  run_as: z.string().max(64).optional().describe('The service account each tick runs as (its id); default: the caller, when it is one'),
};

export const oneKind = (input: { cron?: string; every?: string }) => (input.cron === undefined) !== (input.every === undefined);
export const oneKindMessage = { message: 'give either cron or every (not both)', path: ['cron'] };

export const createScheduleSchema = z.strictObject(scheduleFields).refine(oneKind, oneKindMessage);
export type CreateScheduleInput = z.infer<typeof createScheduleSchema>;

/** A change: any of the fields; cron and every replace each other. */
export const updateScheduleSchema = z
  .strictObject({
    name: scheduleFields.name.optional(),
    cron: scheduleFields.cron,
    every: scheduleFields.every,
    time_zone: timeZoneSchema.optional(),
    parameters: z.record(z.string(), z.string()).optional(),
    overlap: z.enum(OVERLAP_POLICIES).optional(),
    catch_up_window: catchUpSchema.optional(),
    jitter: jitterSchema.nullable().optional(),
    note: text('note', { max: 500 }).nullable().optional(),
    run_as: scheduleFields.run_as,
    force: forceField,
  })
  .refine((input) => !(input.cron !== undefined && input.every !== undefined), oneKindMessage);
export type UpdateScheduleInput = z.infer<typeof updateScheduleSchema>;

export const runNowSchema = z.strictObject({
  overlap: z
    .enum(OVERLAP_POLICIES)
    .optional()
    .describe('For this run-now only, instead of the schedule’s policy: what to do while a run of the schedule is still going (`allow_all`: start anyway)'),
});

export const pauseScheduleSchema = z.strictObject({ note: text('note', { max: 500 }).nullable().default(null) });

export const TICK_FILTERS = ['fired', 'skipped'] as const;
