import { ScheduleModel, type Schedule } from '../../domain/schedules/model';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { FindDeployment } from '../deployments/definitions';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { toScheduleView } from './views';
import type { Deployment } from '../../domain/deployments/model';
import { resolveTargets } from '../deployments/targets';
import { freezesOpenAt } from '../servers/freeze-notices';

/*
 * What every operation on a schedule starts or ends with: finding it through its deployment (the
 * gate's answer on the deployment is the schedule's), its view with the next runs Temporal knows, and
 * bringing its Temporal Schedule to the document after a change.
 */

export function scheduleLookup({ schedules, findDeployment, log }: { schedules: ScheduleWorkflows; findDeployment: FindDeployment; log: Logger }) {
  return {
    /** The schedule of this deployment (another's, or none: 404). */
    async findSchedule(principal: Principal, deploymentId: string, scheduleId: string, action: Parameters<FindDeployment>[2] = 'read') {
      const deployment = await findDeployment(principal, deploymentId, action);
      const schedule = await ScheduleModel.findOne({ _id: parseId(scheduleId, 'Schedule'), deployment_id: deployment._id }).lean<Schedule>();
      if (!schedule) throw notFound('Schedule');
      return { deployment, schedule };
    },

    /** The Temporal Schedule follows the document; Temporal away, the worker's reconcile brings it later. */
    async sync(scheduleId: string) {
      try {
        await schedules.sync(scheduleId);
      } catch (error) {
        log.warn({ err: error, scheduleId }, 'could not bring the Temporal Schedule to its schedule now; the worker’s reconcile will');
      }
    },

    /** Its view: its next runs as Temporal knows them, each with the freezes open then on `deployment`'s targets. */
    async view(schedule: Schedule, deployment: Deployment, nextActionTimes?: Date[]) {
      const [described, frozenAt] = await Promise.all([
        nextActionTimes ? { nextActionTimes } : schedules.describe(schedule._id.toString()).catch(() => null),
        resolveTargets(deployment).then((targets) => freezesOpenAt(deployment.organization_id.toString(), targets)),
      ]);
      return toScheduleView(schedule, described?.nextActionTimes ?? null, frozenAt);
    },
  };
}

export type ScheduleLookup = ReturnType<typeof scheduleLookup>;
