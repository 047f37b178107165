import { z } from 'zod';
import { actorView } from '../../domain/access/actor';
import { maskedParameters } from '../../domain/deployments/parameters';
import { OVERLAP_POLICIES, TICK_OUTCOMES, type Schedule, type ScheduleTick } from '../../domain/schedules/model';
import { localTime } from '../../domain/time/cron';
import { actorSchema } from '../access/views';
import { timestampSchema } from '../http/timestamps';
import { frozenBySchema } from '../servers/freeze-notices';
import { managedByView, managedByViewSchema } from '../ownership/views';

export const nextRunSchema = z.object({
  at: timestampSchema.describe('When, in UTC'),
  local: z.string().describe('The same moment in the schedule’s time_zone, with its offset ("2027-03-28T03:00:00+02:00")'),
  frozen_by: frozenBySchema,
});

/** Which freezes are open at a moment, on the schedule's deployment's targets. */
type FrozenAt = (at: Date) => z.infer<typeof frozenBySchema>;

export const scheduleSchema = z
  .object({
    id: z.string(),
    deployment_id: z.string().nullable().describe('The deployment each tick runs; null for a pipeline’s schedule'),
    pipeline_id: z.string().nullable().describe('The pipeline each tick runs (a pipeline run); null for a deployment’s schedule'),
    name: z.string(),
    cron: z.string().nullable(),
    every: z.string().nullable(),
    time_zone: z.string(),
    parameters: z.record(z.string(), z.string()).describe('Secret ones as ********, or as the ${secret:NAME} reference a schedule applied from Git gives (resolved at each tick)'),
    overlap: z.enum(OVERLAP_POLICIES),
    catch_up_window: z.string(),
    jitter: z.string().nullable(),
    paused: z.boolean(),
    note: z.string().nullable(),
    pause: z.object({ by: actorSchema.nullable(), at: timestampSchema, note: z.string().nullable() }).nullable().describe('Who paused or unpaused it last, when and why'),
    run_as: actorSchema.describe('The service account its ticks run as'),
    next_runs: z
      .array(nextRunSchema)
      .nullable()
      .describe('The next 10 ticks (Temporal’s own computation: DST included, jitter not); empty while paused; null when Temporal could not be asked'),
    created_by: actorSchema.nullable(),
    updated_by: actorSchema.nullable(),
    managed_by: managedByViewSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Schedule' });

export const scheduleListedSchema = scheduleSchema
  .extend({
    deployment_name: z.string().nullable().describe('The name of the deployment it runs (null for a pipeline’s schedule)'),
    pipeline_name: z.string().nullable().describe('The name of the pipeline it runs (null for a deployment’s schedule)'),
  })
  .meta({ id: 'ScheduleListed', description: 'A schedule in the organization’s list, with the name of the deployment or pipeline it runs' });

export const tickSchema = z
  .object({
    id: z.string(),
    scheduled_at: timestampSchema.describe('When the tick was due (before jitter); for a run-now, when it was asked'),
    outcome: z.enum(TICK_OUTCOMES).describe('fired (a run started), or why not: missed, overlap, frozen, paused, forbidden, refused'),
    skipped: z.boolean(),
    run_id: z.string().nullable().describe('The run it started: a deployment run, or for a pipeline’s schedule a pipeline run'),
    message: z.string().nullable(),
    requested_by: actorSchema.nullable().describe('A run-now: who asked; null for the clock’s ticks'),
    recorded_at: timestampSchema,
  })
  .meta({ id: 'ScheduleTick' });

export const toNextRuns = (times: Date[], zone: string, frozenAt: FrozenAt) => times.map((at) => ({ at: at.toISOString(), local: localTime(at, zone), frozen_by: frozenAt(at) }));

export function toScheduleView(schedule: Schedule, nextActionTimes: Date[] | null, frozenAt: FrozenAt): z.infer<typeof scheduleSchema> {
  return {
    id: schedule._id.toString(),
    deployment_id: schedule.deployment_id?.toString() ?? null,
    pipeline_id: schedule.pipeline_id?.toString() ?? null,
    name: schedule.name,
    cron: schedule.cron ?? null,
    every: schedule.every ?? null,
    time_zone: schedule.time_zone,
    parameters: maskedParameters(schedule.parameters),
    overlap: schedule.overlap as (typeof OVERLAP_POLICIES)[number],
    catch_up_window: schedule.catch_up_window,
    jitter: schedule.jitter ?? null,
    paused: schedule.paused,
    note: schedule.note ?? null,
    pause: schedule.paused_at ? { by: actorView(schedule.paused_by), at: schedule.paused_at.toISOString(), note: schedule.pause_note ?? null } : null,
    run_as: actorView(schedule.run_as)!,
    next_runs: nextActionTimes === null ? null : schedule.paused ? [] : toNextRuns(nextActionTimes.slice(0, 10), schedule.time_zone, frozenAt),
    created_by: actorView(schedule.created_by),
    updated_by: actorView(schedule.updated_by),
    managed_by: managedByView(schedule.managed_by),
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
  };
}

export const toTickView = (tick: ScheduleTick): z.infer<typeof tickSchema> => ({
  id: tick._id.toString(),
  scheduled_at: tick.scheduled_at.toISOString(),
  outcome: tick.outcome as (typeof TICK_OUTCOMES)[number],
  skipped: tick.outcome !== 'fired',
  run_id: tick.run_id?.toString() ?? null,
  message: tick.message ?? null,
  requested_by: actorView(tick.requested_by),
  recorded_at: tick.recorded_at.toISOString(),
});
