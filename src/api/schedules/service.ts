import { ScheduleModel, ScheduleTickModel, TICK_OUTCOMES, type Schedule } from '../../domain/schedules/model';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { FindDeployment } from '../deployments/definitions';
import { unlessTemporalUnreachable } from '../http/errors';
import { findPage, type PageQuery } from '../http/pagination';
import { scheduleLookup } from './lookup';
import { organizationSchedules } from './organization';
import { scheduleRunNow } from './run-now';
import { deploymentScheduleTarget, pipelineScheduleTarget, type ScheduleTarget } from './targets';
import { toTickView } from './views';
import { scheduleWrites } from './writes';

interface ScheduleServiceDeps {
  schedules: ScheduleWorkflows;
  secretBox: SecretBox;
  log: Logger;
  /** Counts ticks by outcome (bosun_schedule_ticks_total): a run-now refused for overlap is one. */
  countTick: (outcome: string) => void;
  /** SCHEDULE_MIN_INTERVAL_SECONDS. */
  minIntervalSeconds: number;
}

/**
 * A deployment's or a pipeline's schedules (`target` says which): the documents (the source of
 * truth) and their Temporal Schedules, brought to them after each change. Reading needs `read` on
 * what it runs; changing it, `deployments:write` (writes.ts); a run-now, `deployments:run`, as a
 * trigger does (run-now.ts) — on a pipeline, on every stage's deployment.
 */
export function createScheduleService({ schedules, target, secretBox, log, countTick, minIntervalSeconds }: ScheduleServiceDeps & { target: ScheduleTarget }) {
  const lookup = scheduleLookup({ schedules, target, log });
  const { findSchedule, view } = lookup;
  return {
    async list(principal: Principal, ownerId: string, page: PageQuery) {
      const owner = await target.find(principal, ownerId, 'read');
      return findPage(ScheduleModel, { [target.field]: owner._id }, page, (schedule: Schedule) => view(schedule, owner), { name: 1, _id: 1 });
    },

    /** One schedule; with `from`, its next runs are those after that time (a preview of any week: a DST change, a holiday). */
    async get(principal: Principal, ownerId: string, scheduleId: string, from?: Date) {
      const { owner, schedule } = await findSchedule(principal, ownerId, scheduleId);
      if (!from) return view(schedule, owner);
      const times = await unlessTemporalUnreachable('compute the next runs', () => schedules.timesAfter(scheduleId, from, 10));
      return view({ ...schedule, paused: false }, owner, times);
    },

    ...scheduleWrites({ secretBox, minIntervalSeconds }, lookup),

    runNow: scheduleRunNow({ schedules, countTick }, lookup),

    async ticks(principal: Principal, ownerId: string, scheduleId: string, page: PageQuery, outcome?: string) {
      const { schedule } = await findSchedule(principal, ownerId, scheduleId);
      const filter: Record<string, unknown> = {
        schedule_id: schedule._id,
        ...(outcome === 'skipped' ? { outcome: { $ne: 'fired' } } : outcome ? { outcome } : {}),
      };
      return findPage(ScheduleTickModel, filter, page, toTickView, { scheduled_at: -1, _id: -1 });
    },
  };
}

export type ScheduleService = ReturnType<typeof createScheduleService>;

/** Deployments' schedules, pipelines' schedules, and the organization's list of both. */
export function createScheduleServices(deps: ScheduleServiceDeps & { findDeployment: FindDeployment }) {
  const deploymentTarget = deploymentScheduleTarget(deps.findDeployment);
  return {
    deployments: createScheduleService({ ...deps, target: deploymentTarget }),
    pipelines: createScheduleService({ ...deps, target: pipelineScheduleTarget }),
    listAll: organizationSchedules({ deployments: scheduleLookup({ ...deps, target: deploymentTarget }), pipelines: scheduleLookup({ ...deps, target: pipelineScheduleTarget }) }),
    /** Temporal Schedules of deleted schedules removed (the worker's reconcile removes any left). */
    removed: (ids: string[]) => Promise.all(ids.map((id) => deps.schedules.remove(id))).then(() => undefined),
  };
}

export type ScheduleServices = ReturnType<typeof createScheduleServices>;

export const TICK_OUTCOME_FILTERS = ['skipped', ...TICK_OUTCOMES] as const;
