import type { Actor } from '../../domain/access/actor';
import type { OverlapPolicy } from '../../domain/schedules/model';
import { recordTick, unfinishedTicksOf } from '../../domain/schedules/store';
import type { ScheduleWorkflows } from '../../domain/temporal/schedules';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import type { ScheduleLookup } from './lookup';

/**
 * Run now: the same tick workflow as the clock's, started at once, as the schedule's service
 * account; needs `deployments:run`, as a trigger does. The schedule's overlap policy (or `overlap`,
 * for this run-now only) applies to the runs of its ticks still going: `skip` refuses (409 overlap,
 * recorded as a tick skipped for overlap), `buffer_one` starts it once they end (one run-now waits so
 * at a time), `cancel_other` cancels them first, `allow_all` starts it beside them.
 */
export const scheduleRunNow =
  ({ schedules, countTick }: { schedules: ScheduleWorkflows; countTick: (outcome: string) => void }, { findSchedule }: ScheduleLookup) =>
  async (principal: Principal, ownerId: string, scheduleId: string, overlap?: OverlapPolicy) => {
    const { schedule } = await findSchedule(principal, ownerId, scheduleId, 'deployments:run');
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
  };
