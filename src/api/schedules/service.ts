import { Types } from 'mongoose';
import type { Actor } from '../../domain/access/actor';
import { mayEverywhere } from '../../domain/access/grants';
import { IdentityModel } from '../../domain/access/model';
import { isDuplicateKey } from '../../domain/database';
import type { Deployment } from '../../domain/deployments/model';
import { resolveParameters, storeParameters } from '../../domain/deployments/parameters';
import { ScheduleModel, ScheduleTickModel, TICK_OUTCOMES, type OverlapPolicy, type Schedule } from '../../domain/schedules/model';
import { createSchedule, deleteSchedule, recordTick, setPaused, unfinishedTicksOf, updateSchedule, type ScheduleFields } from '../../domain/schedules/store';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import { normalCron } from '../../domain/time/cron';
import { actAsServiceAccount, actorOf, parseDuration, type Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { FindDeployment } from '../deployments/definitions';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import type { CreateScheduleInput, UpdateScheduleInput } from './schemas';
import { toScheduleView, toTickView } from './views';

const invalid = (path: string, message: string) => new ApiError('validation_failed', 'The request body is invalid', [{ path, message }]);

/**
 * A deployment's schedules: the documents (the source of truth) and their Temporal Schedules,
 * brought to them after each change. Reading needs `read` on the deployment; changing it,
 * `deployments:write`; a run-now, `deployments:run`, as a trigger does.
 */
export function createScheduleService({
  schedules,
  findDeployment,
  secretBox,
  log,
  countTick,
}: {
  schedules: ScheduleWorkflows;
  findDeployment: FindDeployment;
  secretBox: SecretBox;
  log: Logger;
  /** Counts ticks by outcome (bosun_schedule_ticks_total): a run-now refused for overlap is one. */
  countTick: (outcome: string) => void;
}) {
  /** The schedule of this deployment (another's, or none: 404). */
  async function findSchedule(principal: Principal, deploymentId: string, scheduleId: string, action: Parameters<FindDeployment>[2] = 'read') {
    const deployment = await findDeployment(principal, deploymentId, action);
    const schedule = await ScheduleModel.findOne({ _id: parseId(scheduleId, 'Schedule'), deployment_id: deployment._id }).lean<Schedule>();
    if (!schedule) throw notFound('Schedule');
    return { deployment, schedule };
  }

  /** The Temporal Schedule follows the document; Temporal away, the worker's reconcile brings it later. */
  async function sync(scheduleId: string) {
    try {
      await schedules.sync(scheduleId);
    } catch (error) {
      log.warn({ err: error, scheduleId }, 'could not bring the Temporal Schedule to its schedule now; the worker’s reconcile will');
    }
  }

  async function view(schedule: Schedule) {
    const described = await schedules.describe(schedule._id.toString()).catch(() => null);
    return toScheduleView(schedule, described?.nextActionTimes ?? null);
  }

  /**
   * The service account ticks run as: the one named (its id), or the caller when it is one. Only an
   * admin may name another identity than itself; the account must be able to run the deployment now
   * (and is checked again at every tick).
   */
  async function runAsOf(principal: Principal, deployment: Deployment, runAs: string | undefined): Promise<Actor> {
    let id = runAs;
    if (id === undefined) {
      if (principal.identity.type !== 'service_account') throw invalid('run_as', 'a schedule runs as a service account: give its id in run_as');
      id = principal.identity.id;
    }
    if (!/^[0-9a-f]{24}$/i.test(id)) throw invalid('run_as', 'must be the id of a service account');
    const identity = await IdentityModel.findOne({ _id: new Types.ObjectId(id), organization_id: principal.organizationId }, { type: 1, name: 1 }).lean();
    if (!identity || identity.type !== 'service_account') throw invalid('run_as', 'no service account with this id in the organization');
    if (id !== principal.identity.id && !mayEverywhere(principal, 'admin')) {
      throw new ApiError('forbidden', `Only an admin may schedule runs as another identity than itself (${identity.name})`);
    }
    const account = await actAsServiceAccount(id);
    if (typeof account === 'string') throw invalid('run_as', `the service account ${identity.name} is ${account}`);
    try {
      await findDeployment(account, deployment._id.toString(), 'deployments:run');
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'forbidden' || error.code === 'not_found')) throw invalid('run_as', `${identity.name} may not run this deployment: ${error.message}`);
      throw error;
    }
    return { type: 'service_account', id: identity._id.toString(), name: identity.name, token_id: null };
  }

  function parametersOf(principal: Principal, deployment: Deployment, given: Record<string, string>) {
    const { values, problems } = resolveParameters(deployment.parameters ?? [], given);
    if (problems.length) throw new ApiError('validation_failed', 'The parameters are invalid', problems.map((p) => ({ ...p, path: `parameters.${p.path}` })));
    return storeParameters(values.filter((v) => Object.hasOwn(given, v.name)), secretBox, principal.organizationId);
  }

  const timing = (input: { cron?: string; every?: string; catch_up_window?: string; jitter?: string | null }): Partial<ScheduleFields> => ({
    ...(input.cron !== undefined ? { cron: normalCron(input.cron), every: null, every_seconds: null } : {}),
    ...(input.every !== undefined ? { every: input.every, every_seconds: parseDuration(input.every), cron: null } : {}),
    ...(input.catch_up_window !== undefined ? { catch_up_window: input.catch_up_window, catch_up_window_seconds: parseDuration(input.catch_up_window) } : {}),
    ...(input.jitter !== undefined ? { jitter: input.jitter, jitter_seconds: input.jitter ? parseDuration(input.jitter) : 0 } : {}),
  });

  const duplicateName = (name: string) => new ApiError('conflict', `The deployment already has a schedule named "${name}"`);

  return {
    async list(principal: Principal, deploymentId: string, page: PageQuery) {
      const deployment = await findDeployment(principal, deploymentId, 'read');
      return findPage(ScheduleModel, { deployment_id: deployment._id }, page, view, { name: 1, _id: 1 });
    },

    /** One schedule; with `from`, its next runs are those after that time (a preview of any week: a DST change, a holiday). */
    async get(principal: Principal, deploymentId: string, scheduleId: string, from?: Date) {
      const { schedule } = await findSchedule(principal, deploymentId, scheduleId);
      if (!from) return view(schedule);
      const times = await unlessTemporalUnreachable('compute the next runs', () => schedules.timesAfter(scheduleId, from, 10));
      return toScheduleView({ ...schedule, paused: false }, times);
    },

    async create(principal: Principal, deploymentId: string, input: CreateScheduleInput) {
      const deployment = await findDeployment(principal, deploymentId, 'deployments:write');
      const run_as = await runAsOf(principal, deployment, input.run_as);
      const by = actorOf(principal) as Actor;
      let schedule: Schedule;
      try {
        schedule = await createSchedule({
          organization_id: deployment.organization_id,
          deployment_id: deployment._id,
          name: input.name,
          cron: null,
          every: null,
          every_seconds: null,
          time_zone: input.time_zone,
          parameters: parametersOf(principal, deployment, input.parameters),
          overlap: input.overlap,
          catch_up_window: input.catch_up_window,
          catch_up_window_seconds: parseDuration(input.catch_up_window),
          jitter: input.jitter,
          jitter_seconds: input.jitter ? parseDuration(input.jitter) : 0,
          note: input.note,
          ...timing(input),
          paused: input.paused,
          run_as,
          created_by: by,
        });
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name);
        throw error;
      }
      await sync(schedule._id.toString());
      return view(schedule);
    },

    async update(principal: Principal, deploymentId: string, scheduleId: string, input: UpdateScheduleInput) {
      const { deployment, schedule } = await findSchedule(principal, deploymentId, scheduleId, 'deployments:write');
      const fields: Partial<ScheduleFields> & { run_as?: Actor } = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.time_zone !== undefined ? { time_zone: input.time_zone } : {}),
        ...(input.overlap !== undefined ? { overlap: input.overlap } : {}),
        ...(input.note !== undefined ? { note: input.note } : {}),
        ...(input.parameters !== undefined ? { parameters: parametersOf(principal, deployment, input.parameters) } : {}),
        ...(input.run_as !== undefined ? { run_as: await runAsOf(principal, deployment, input.run_as) } : {}),
        ...timing(input),
      };
      let updated: Schedule | null;
      try {
        updated = await updateSchedule(schedule._id, fields, actorOf(principal) as Actor);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(input.name!);
        throw error;
      }
      if (!updated) throw notFound('Schedule');
      await sync(scheduleId);
      return view(updated);
    },

    async remove(principal: Principal, deploymentId: string, scheduleId: string) {
      const { schedule } = await findSchedule(principal, deploymentId, scheduleId, 'deployments:write');
      await deleteSchedule(schedule._id);
      await sync(scheduleId);
    },

    async setPaused(principal: Principal, deploymentId: string, scheduleId: string, paused: boolean, note: string | null) {
      const { schedule } = await findSchedule(principal, deploymentId, scheduleId, 'deployments:write');
      const changed = await setPaused(schedule._id, paused, actorOf(principal) as Actor, note);
      if (!changed) throw notFound('Schedule');
      await sync(scheduleId);
      return view(changed);
    },

    /**
     * Run now: the same tick workflow as the clock's, started at once, as the schedule's service
     * account. The schedule's overlap policy (or `overlap`, for this run-now only) applies to the runs
     * of its ticks still going: `skip` refuses (409 overlap, recorded as a tick skipped for overlap),
     * `buffer_one` starts it once they end (one run-now waits so at a time), `cancel_other` cancels
     * them first, `allow_all` starts it beside them.
     */
    async runNow(principal: Principal, deploymentId: string, scheduleId: string, overlap?: OverlapPolicy) {
      const { schedule } = await findSchedule(principal, deploymentId, scheduleId, 'deployments:run');
      const policy = overlap ?? schedule.overlap;
      const going = policy === 'allow_all' ? [] : (await unfinishedTicksOf(schedule._id, 20)).map((t) => String(t.run_id));
      const requestedBy = actorOf(principal) as Actor;
      const list = going.join(', ');
      const refuse = async (message: string) => {
        if (await recordTick({ schedule, scheduledAt: new Date(), requestedBy, outcome: 'overlap', message })) countTick('overlap');
        throw new ApiError('overlap', `Not started: ${message}`, undefined, { run_ids: going });
      };
      if (going.length && policy === 'skip') await refuse(`a run of this schedule is still going (${list}) and its overlap policy is skip`);
      const options = !going.length ? {} : policy === 'buffer_one' ? { after: going } : policy === 'cancel_other' ? { cancelling: going } : {};
      const requestedAt = await unlessTemporalUnreachable('start the tick', () => schedules.runNow(schedule, requestedBy, options));
      if (requestedAt === null) return refuse(`a run-now already waits for the runs still going (${list}) and the overlap policy buffers one`);
      const how = !going.length
        ? 'Tick started'
        : policy === 'buffer_one'
          ? `Tick buffered: it starts when ${list} ends (overlap buffer_one)`
          : policy === 'cancel_other'
            ? `Tick started; cancelling ${list} first (overlap cancel_other)`
            : `Tick started beside ${list} (overlap allow_all)`;
      return { scheduled_at: requestedAt, message: `${how}; GET …/schedules/${scheduleId}/ticks shows its run (or why none started).` };
    },

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
