import type { Actor } from '../../domain/access/actor';
import { isDuplicateKey } from '../../domain/database';
import { resolveParameters, storeParameters } from '../../domain/deployments/parameters';
import type { Schedule } from '../../domain/schedules/model';
import { createSchedule, deleteSchedule, setPaused, updateSchedule, type ScheduleFields } from '../../domain/schedules/store';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { normalCron } from '../../domain/time/cron';
import { parseDuration } from '../../domain/time/durations';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { ApiError, notFound } from '../http/errors';
import type { ScheduleLookup } from './lookup';
import { runAsOf } from './run-as';
import type { CreateScheduleInput, UpdateScheduleInput } from './schemas';
import type { ScheduleOwner } from './targets';
import { checkOwnership } from '../ownership/guard';

/*
 * A schedule's changes: create, update, delete, pause and resume, each needing `deployments:write`
 * on its deployment (a pipeline's: on every stage's); the Temporal Schedule is brought to the document after each.
 */

const timing = (input: { cron?: string; every?: string; catch_up_window?: string; jitter?: string | null }): Partial<ScheduleFields> => ({
  ...(input.cron !== undefined ? { cron: normalCron(input.cron), every: null, every_seconds: null } : {}),
  ...(input.every !== undefined ? { every: input.every, every_seconds: parseDuration(input.every), cron: null } : {}),
  ...(input.catch_up_window !== undefined ? { catch_up_window: input.catch_up_window, catch_up_window_seconds: parseDuration(input.catch_up_window) } : {}),
  ...(input.jitter !== undefined ? { jitter: input.jitter, jitter_seconds: input.jitter ? parseDuration(input.jitter) : 0 } : {}),
});

const duplicateName = (kind: string, name: string) => new ApiError('conflict', `The ${kind} already has a schedule named "${name}"`);

/** "1 minute", "90 seconds": the shortest interval, as the refusal says it. */
const spoken = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'} ("${seconds / 60}m")` : `${seconds} second${seconds === 1 ? '' : 's'} ("${seconds}s")`);

/** An interval shorter than SCHEDULE_MIN_INTERVAL_SECONDS: refused as the schema refuses what it can judge alone. */
function checkInterval(every: string | undefined, minIntervalSeconds: number): void {
  if (every === undefined || parseDuration(every) >= minIntervalSeconds) return;
  throw new ApiError('validation_failed', 'The request body is invalid', [{ path: 'every', message: `an interval is at least ${spoken(minIntervalSeconds)}` }]);
}

export interface ScheduleWriteDeps {
  secretBox: SecretBox;
  /** SCHEDULE_MIN_INTERVAL_SECONDS: the shortest `every`. */
  minIntervalSeconds: number;
}

export function scheduleWrites({ secretBox, minIntervalSeconds }: ScheduleWriteDeps, { target, findSchedule, sync, view }: ScheduleLookup) {
  function parametersOf(principal: Principal, owner: ScheduleOwner, given: Record<string, string>) {
    const { values, problems } = resolveParameters(owner.parameters ?? [], given);
    // Each problem's path is already `parameters.<name>`.
    if (problems.length) throw new ApiError('validation_failed', 'The parameters are invalid', problems);
    return storeParameters(values.filter((v) => Object.hasOwn(given, v.name)), secretBox, principal.organizationId);
  }

  return {
    async create(principal: Principal, ownerId: string, input: CreateScheduleInput) {
      checkInterval(input.every, minIntervalSeconds);
      const owner = await target.find(principal, ownerId, 'deployments:write');
      const run_as = await runAsOf(target, principal, owner, input.run_as);
      const by = actorOf(principal) as Actor;
      let schedule: Schedule;
      try {
        schedule = await createSchedule({
          organization_id: owner.organization_id,
          ...(target.field === 'pipeline_id' ? { pipeline_id: owner._id } : { deployment_id: owner._id }),
          name: input.name,
          cron: null,
          every: null,
          every_seconds: null,
          time_zone: input.time_zone,
          parameters: parametersOf(principal, owner, input.parameters),
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
        if (isDuplicateKey(error)) throw duplicateName(target.kind, input.name);
        throw error;
      }
      await sync(schedule._id.toString());
      return view(schedule, owner);
    },

    async update(principal: Principal, ownerId: string, scheduleId: string, { force = false, ...input }: UpdateScheduleInput) {
      checkInterval(input.every, minIntervalSeconds);
      const { owner, schedule } = await findSchedule(principal, ownerId, scheduleId, 'deployments:write');
      const forced = checkOwnership(principal, { kind: 'Schedule', name: schedule.name, managedBy: schedule.managed_by }, { force });
      const fields: Partial<ScheduleFields> & { run_as?: Actor } = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.time_zone !== undefined ? { time_zone: input.time_zone } : {}),
        ...(input.overlap !== undefined ? { overlap: input.overlap } : {}),
        ...(input.note !== undefined ? { note: input.note } : {}),
        ...(input.parameters !== undefined ? { parameters: parametersOf(principal, owner, input.parameters) } : {}),
        ...(input.run_as !== undefined ? { run_as: await runAsOf(target, principal, owner, input.run_as) } : {}),
        ...timing(input),
      };
      let updated: Schedule | null;
      try {
        updated = await updateSchedule(schedule._id, fields, actorOf(principal) as Actor, forced);
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(target.kind, input.name!);
        throw error;
      }
      if (!updated) throw notFound('Schedule');
      await sync(scheduleId);
      return view(updated, owner);
    },

    async remove(principal: Principal, ownerId: string, scheduleId: string, force = false) {
      const { schedule } = await findSchedule(principal, ownerId, scheduleId, 'deployments:write');
      checkOwnership(principal, { kind: 'Schedule', name: schedule.name, managedBy: schedule.managed_by }, { force, deleting: true });
      await deleteSchedule(schedule._id);
      await sync(scheduleId);
    },

    async setPaused(principal: Principal, ownerId: string, scheduleId: string, paused: boolean, note: string | null) {
      const { owner, schedule } = await findSchedule(principal, ownerId, scheduleId, 'deployments:write');
      const changed = await setPaused(schedule._id, paused, actorOf(principal) as Actor, note);
      if (!changed) throw notFound('Schedule');
      await sync(scheduleId);
      return view(changed, owner);
    },
  };
}
