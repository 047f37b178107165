import { ScheduleModel, type Schedule } from '../../domain/schedules/model';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { Action } from '../../domain/access/roles';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { toScheduleView } from './views';
import { freezesOpenAt } from '../servers/freeze-notices';
import type { ScheduleOwner, ScheduleTarget } from './targets';

/*
 * What every operation on a schedule starts or ends with: finding it through what it runs (the
 * gate's answer on the deployment or pipeline is the schedule's), its view with the next runs
 * Temporal knows, and bringing its Temporal Schedule to the document after a change.
 */

export function scheduleLookup({ schedules, target, log }: { schedules: ScheduleWorkflows; target: ScheduleTarget; log: Logger }) {
  return {
    target,

    /** The schedule of this deployment or pipeline (another's, or none: 404). */
    async findSchedule(principal: Principal, ownerId: string, scheduleId: string, action: Action = 'read') {
      const owner = await target.find(principal, ownerId, action);
      const schedule = await ScheduleModel.findOne({ _id: parseId(scheduleId, 'Schedule'), [target.field]: owner._id }).lean<Schedule>();
      if (!schedule) throw notFound('Schedule');
      return { owner, schedule };
    },

    /** The Temporal Schedule follows the document; Temporal away, the worker's reconcile brings it later. */
    async sync(scheduleId: string) {
      try {
        await schedules.sync(scheduleId);
      } catch (error) {
        log.warn({ err: error, scheduleId }, 'could not bring the Temporal Schedule to its schedule now; the worker’s reconcile will');
      }
    },

    /** Its view: its next runs as Temporal knows them, each with the freezes open then on the servers it runs on. */
    async view(schedule: Schedule, owner: ScheduleOwner, nextActionTimes?: Date[]) {
      const [described, frozenAt] = await Promise.all([
        nextActionTimes ? { nextActionTimes } : schedules.describe(schedule._id.toString()).catch(() => null),
        target.servers(owner).then((servers) => freezesOpenAt(owner.organization_id.toString(), servers)),
      ]);
      return toScheduleView(schedule, described?.nextActionTimes ?? null, frozenAt);
    },
  };
}

export type ScheduleLookup = ReturnType<typeof scheduleLookup>;
