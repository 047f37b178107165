import type { Types } from 'mongoose';
import { scheduledRunWorkflowId } from '../domain/contracts/workflow-ids';
import { ScheduleModel, ScheduleTickModel, type Schedule, type SkipReason } from '../domain/schedules/model';
import { advanceLedger, recordTick, tickAt, unfinishedTicksOf } from '../domain/schedules/store';
import { runsGoing } from '../domain/schedules/tick-runs';
import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';
import { periodically } from './periodic';

/** How long after a tick's latest possible start (due + jitter + catch-up window) it is accounted for (SCHEDULE_ACCOUNTING_GRACE_SECONDS). */
const GRACE_MS = 60_000;

/** Temporal's name for a tick's workflow: the schedule's workflow id and the due time, to the second. */
const tickWorkflowId = (scheduleId: string, due: Date) => `${scheduledRunWorkflowId(scheduleId)}-${due.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;

/** The pause the schedule was in at `at`, if any (its note is that pause's, not the last pause or unpause's). */
const pauseAt = (schedule: Schedule, at: Date) => schedule.pauses.find((p) => p.from.getTime() <= at.getTime() && (!p.to || at.getTime() < p.to.getTime()));

/** Whether a run of an earlier tick was still going at `at` (the overlap policy then skipped this one). */
async function runningAt(scheduleId: Types.ObjectId, at: Date): Promise<boolean> {
  const earlier = await ScheduleTickModel.find({ schedule_id: scheduleId, outcome: 'fired', scheduled_at: { $lt: at }, run_id: { $ne: null } }, { run_id: 1 })
    .sort({ scheduled_at: -1 })
    .limit(20)
    .lean();
  if (!earlier.length) return false;
  return (await runsGoing(earlier.map((t) => t.run_id!), at)).length > 0;
}

/**
 * Accounts for every tick Temporal's scheduler matched (its own computation) that started no tick
 * workflow: each recorded once as skipped, with why — `paused` (the schedule was paused then),
 * `overlap` (an earlier tick's run was still going, and the policy skips), or `missed` (nothing ran
 * it within its catch-up window: Bosun or Temporal was down). A tick is looked at only once it can no
 * longer start (due + jitter + catch-up window + a minute), and only if Temporal has no workflow of it.
 */
export async function accountForTicks(workflows: WorkflowGateway, countTick: (outcome: string) => void, now = new Date(), log?: Logger, graceMs = GRACE_MS): Promise<number> {
  let recorded = 0;
  for await (const schedule of ScheduleModel.find({}).lean<Schedule>().cursor()) {
    try {
      recorded += await accountForSchedule(workflows, schedule, countTick, now, graceMs);
    } catch (err) {
      // One schedule that cannot be judged now (its Temporal Schedule missing until the reconcile) does not hold up the others.
      log?.warn({ err, scheduleId: schedule._id.toString() }, 'could not account for a schedule’s ticks; trying again later');
    }
  }
  return recorded;
}

async function accountForSchedule(workflows: WorkflowGateway, schedule: Schedule, countTick: (outcome: string) => void, now: Date, graceMs: number): Promise<number> {
  let recorded = 0;
  const id = schedule._id.toString();
  let horizon = new Date(now.getTime() - (schedule.catch_up_window_seconds + schedule.jitter_seconds) * 1000 - graceMs);
  // A buffered tick starts when the run before it ends: wait for that before judging.
  if (schedule.overlap === 'buffer_one') {
    const earliest = (await unfinishedTicksOf(schedule._id, 5)).map((t) => t.scheduled_at.getTime());
    if (earliest.length) horizon = new Date(Math.min(horizon.getTime(), Math.min(...earliest)));
  }
  if (horizon.getTime() <= schedule.ledger_until.getTime()) return 0;
  const due = (await workflows.schedules.matchingTimes(id, schedule.ledger_until, horizon)).filter((t) => t.getTime() > schedule.ledger_until.getTime() && t.getTime() <= horizon.getTime());
  for (const at of due) {
    if (await tickAt(schedule._id, at)) continue;
    if (await workflows.workflowOpenOrClosed(tickWorkflowId(id, at))) continue;
    const pause = pauseAt(schedule, at);
    const reason: SkipReason = pause ? 'paused' : schedule.overlap !== 'allow_all' && schedule.overlap !== 'cancel_other' && (await runningAt(schedule._id, at)) ? 'overlap' : 'missed';
    const message =
      reason === 'paused' ? `the schedule was paused${pause?.note ? ` (${pause.note})` : ''}` : reason === 'overlap' ? 'the run of an earlier tick was still going (overlap: ' + schedule.overlap + ')' : `not run within its catch-up window (${schedule.catch_up_window}): Bosun or Temporal was down`;
    if (await recordTick({ schedule, scheduledAt: at, outcome: reason, message })) {
      recorded += 1;
      countTick(reason);
    }
  }
  await advanceLedger(schedule._id, horizon);
  return recorded;
}

/** Every 30 s (SCHEDULE_SWEEP_SECONDS): ticks accounted for; every 10th sweep (and at start): Temporal Schedules reconciled with their schedules and config sources. */
export function startScheduleSweeper(workflows: WorkflowGateway, log: Logger, countTick: (outcome: string) => void, everyMs = 30_000, graceMs = GRACE_MS): () => Promise<void> {
  let rounds = 0;
  return periodically(
    everyMs,
    async () => {
      if (rounds % 10 === 0) {
        const repaired = await workflows.schedules.reconcile({ renew: rounds === 0 });
        if (repaired.created || repaired.updated || repaired.deleted) log.info(repaired, 'Temporal Schedules brought to their schedules');
        const sources = await workflows.configSources.reconcile();
        if (sources.created || sources.deleted) log.info(sources, 'Temporal Schedules brought to their config sources');
      }
      rounds += 1;
      await accountForTicks(workflows, countTick, new Date(), log, graceMs);
    },
    (err) => log.warn({ err }, 'schedule sweep failed; trying again later'),
  );
}
