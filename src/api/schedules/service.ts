import { ScheduleModel, ScheduleTickModel, TICK_OUTCOMES, type Schedule } from '../../domain/schedules/model';
import { DeploymentModel, type Deployment } from '../../domain/deployments/model';
import { readableDeploymentFilter } from '../access/gate';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { FindDeployment } from '../deployments/definitions';
import { unlessTemporalUnreachable } from '../http/errors';
import { findPage, type PageQuery } from '../http/pagination';
import { scheduleLookup } from './lookup';
import { scheduleRunNow } from './run-now';
import { toTickView } from './views';
import { scheduleWrites } from './writes';

/**
 * A deployment's schedules: the documents (the source of truth) and their Temporal Schedules,
 * brought to them after each change. Reading needs `read` on the deployment; changing it,
 * `deployments:write` (writes.ts); a run-now, `deployments:run`, as a trigger does (run-now.ts).
 */
export function createScheduleService({
  schedules,
  findDeployment,
  secretBox,
  log,
  countTick,
  minIntervalSeconds,
}: {
  schedules: ScheduleWorkflows;
  findDeployment: FindDeployment;
  secretBox: SecretBox;
  log: Logger;
  /** Counts ticks by outcome (bosun_schedule_ticks_total): a run-now refused for overlap is one. */
  countTick: (outcome: string) => void;
  /** SCHEDULE_MIN_INTERVAL_SECONDS. */
  minIntervalSeconds: number;
}) {
  const lookup = scheduleLookup({ schedules, findDeployment, log });
  const { findSchedule, view } = lookup;
  return {
    /** Every schedule of the deployments the caller may read, each with its deployment's name, by name. */
    async listAll(principal: Principal, page: PageQuery) {
      const readable = await readableDeploymentFilter(principal);
      const deployments = await DeploymentModel.find(readable).lean<Deployment[]>();
      const byId = new Map(deployments.map((d) => [d._id.toString(), d]));
      const filter = { deployment_id: { $in: deployments.map((d) => d._id) } };
      return findPage(
        ScheduleModel,
        filter,
        page,
        async (schedule: Schedule) => {
          const deployment = byId.get(schedule.deployment_id.toString())!;
          return { ...(await view(schedule, deployment)), deployment_name: deployment.name };
        },
        { name: 1, _id: 1 },
      );
    },

    async list(principal: Principal, deploymentId: string, page: PageQuery) {
      const deployment = await findDeployment(principal, deploymentId, 'read');
      return findPage(ScheduleModel, { deployment_id: deployment._id }, page, (schedule: Schedule) => view(schedule, deployment), { name: 1, _id: 1 });
    },

    /** One schedule; with `from`, its next runs are those after that time (a preview of any week: a DST change, a holiday). */
    async get(principal: Principal, deploymentId: string, scheduleId: string, from?: Date) {
      const { deployment, schedule } = await findSchedule(principal, deploymentId, scheduleId);
      if (!from) return view(schedule, deployment);
      const times = await unlessTemporalUnreachable('compute the next runs', () => schedules.timesAfter(scheduleId, from, 10));
      return view({ ...schedule, paused: false }, deployment, times);
    },

    ...scheduleWrites({ findDeployment, secretBox, minIntervalSeconds }, lookup),

    runNow: scheduleRunNow({ schedules, countTick }, lookup),

    async ticks(principal: Principal, deploymentId: string, scheduleId: string, page: PageQuery, outcome?: string) {
      const { schedule } = await findSchedule(principal, deploymentId, scheduleId);
      const filter: Record<string, unknown> = {
        schedule_id: schedule._id,
        ...(outcome === 'skipped' ? { outcome: { $ne: 'fired' } } : outcome ? { outcome } : {}),
      };
      return findPage(ScheduleTickModel, filter, page, toTickView, { scheduled_at: -1, _id: -1 });
    },
  };
}

export const TICK_OUTCOME_FILTERS = ['skipped', ...TICK_OUTCOMES] as const;

export type ScheduleService = ReturnType<typeof createScheduleService>;
