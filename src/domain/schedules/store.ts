import { Types, type ClientSession } from 'mongoose';
import type { Actor } from '../access/actor';
import { inTransaction, isDuplicateKey } from '../database';
import { recordTickSkipped } from './notification-events';
import { recordSystemDecision } from '../audit/system-decisions';
import type { StoredParameter } from '../deployments/parameters';
import { runsGoing } from './tick-runs';
import { ScheduleModel, ScheduleTickModel, type OverlapPolicy, type Schedule, type ScheduleTick, type SkipReason } from './model';

/*
 * The schedules store: every write to a schedule and its ticks. A change bumps `revision` in the
 * same write (the Temporal Schedule is then brought to it: src/domain/temporal/schedules.ts); a
 * tick is recorded once (unique on its schedule and due time), whoever records it first.
 */

export interface ScheduleFields {
  name: string;
  cron: string | null;
  every: string | null;
  every_seconds: number | null;
  time_zone: string;
  parameters: StoredParameter[];
  overlap: OverlapPolicy;
  catch_up_window: string;
  catch_up_window_seconds: number;
  jitter: string | null;
  jitter_seconds: number;
  note: string | null;
}

/** What a schedule runs: a deployment or a pipeline. */
export type ScheduleOwnerField = { deployment_id: Types.ObjectId } | { pipeline_id: Types.ObjectId };

export async function createSchedule(input: ScheduleFields & ScheduleOwnerField & { organization_id: Types.ObjectId; paused: boolean; run_as: Actor; created_by: Actor }): Promise<Schedule> {
  const now = new Date();
  const created = await ScheduleModel.create({
    ...input,
    updated_by: input.created_by,
    revision: 1,
    ledger_until: now,
    ...(input.paused ? { paused_by: input.created_by, paused_at: now, pause_note: input.note, pauses: [{ from: now, to: null, note: input.note }] } : {}),
  });
  return created.toObject() as Schedule;
}

/** A change of definition (not of pause: see setPaused), as one write; null when the schedule is gone. */
export async function updateSchedule(id: Types.ObjectId, fields: Partial<ScheduleFields> & { run_as?: Actor }, by: Actor, forced: Record<string, Date | string> = {}): Promise<Schedule | null> {
  // A new timing: ticks due before now were the old timing's (those it fired are recorded); skipped ones are judged from now on.
  const retimed = fields.cron !== undefined || fields.every !== undefined || fields.time_zone !== undefined;
  return ScheduleModel.findOneAndUpdate(
    { _id: id },
    { $set: { ...fields, updated_by: by, ...forced }, $inc: { revision: 1 }, ...(retimed ? { $max: { ledger_until: new Date() } } : {}) },
    { returnDocument: 'after' },
  ).lean<Schedule>();
}

/**
 * Pauses or unpauses, with who and why; a pause opens an interval in `pauses`, an unpause closes it.
 * Null when the schedule is gone; the schedule as it was when it was already in that state.
 */
export async function setPaused(id: Types.ObjectId, paused: boolean, by: Actor, note: string | null): Promise<Schedule | null> {
  const now = new Date();
  const changed = await ScheduleModel.findOneAndUpdate(
    { _id: id, paused: !paused },
    paused
      ? { $set: { paused: true, paused_by: by, paused_at: now, pause_note: note, updated_by: by }, $push: { pauses: { from: now, to: null, note } }, $inc: { revision: 1 } }
      : { $set: { paused: false, paused_by: by, paused_at: now, pause_note: note, updated_by: by, 'pauses.$[open].to': now }, $inc: { revision: 1 } },
    { returnDocument: 'after', ...(paused ? {} : { arrayFilters: [{ 'open.to': null }] }) },
  ).lean<Schedule>();
  return changed ?? ScheduleModel.findById(id).lean<Schedule>();
}

export const deleteSchedule = async (id: Types.ObjectId, session?: ClientSession) => {
  await ScheduleModel.deleteOne({ _id: id }, { session });
  await ScheduleTickModel.deleteMany({ schedule_id: id }, { session });
};

/** A deployment's or a pipeline's schedules, deleted with it: their ids (their Temporal Schedules go too). */
/** A deployment's or pipeline's schedules that a Git source manages: what deleting it would take along. */
export async function managedSchedulesOf(owner: ScheduleOwnerField): Promise<Array<{ kind: 'Schedule'; name: string; managedBy: Schedule['managed_by'] }>> {
  const found = await ScheduleModel.find({ ...owner, managed_by: { $ne: null } }, { name: 1, managed_by: 1 }).lean<Array<Pick<Schedule, 'name' | 'managed_by'>>>();
  return found.map((schedule) => ({ kind: 'Schedule', name: schedule.name, managedBy: schedule.managed_by }));
}

export async function deleteSchedulesOf(owner: ScheduleOwnerField, session?: ClientSession): Promise<string[]> {
  const ids = (await ScheduleModel.find(owner, { _id: 1 }, { session }).lean()).map((s) => s._id);
  await ScheduleModel.deleteMany({ _id: { $in: ids } }, { session });
  await ScheduleTickModel.deleteMany({ schedule_id: { $in: ids } }, { session });
  return ids.map(String);
}

export interface TickRecord {
  schedule: Pick<Schedule, '_id' | 'organization_id' | 'deployment_id' | 'pipeline_id' | 'name'>;
  scheduledAt: Date;
  requestedBy?: Actor | null;
  outcome: 'fired' | SkipReason;
  runId?: Types.ObjectId | string | null;
  message?: string | null;
}

/** What a schedule's ticks run, as the audit trail names it. */
export const scheduleTargetOf = (schedule: Pick<Schedule, 'deployment_id' | 'pipeline_id'>) =>
  schedule.pipeline_id ? { kind: 'pipeline', id: String(schedule.pipeline_id) } : { kind: 'deployment', id: String(schedule.deployment_id) };

/** Ticks that started no run by Bosun's own decision: nothing ran them in time, the schedule was paused, an earlier run still went. */
const SKIPPED_BY_BOSUN = new Set<string>(['missed', 'paused', 'overlap']);

/** Records a tick once: true when this call recorded it, false when it was recorded already. */
export async function recordTick({ schedule, scheduledAt, requestedBy = null, outcome, runId = null, message = null }: TickRecord): Promise<boolean> {
  try {
    // A skipped tick is an event: the tick and it are one transaction.
    await inTransaction(async (session) => {
      await ScheduleTickModel.create(
        [
          {
            organization_id: schedule.organization_id,
            schedule_id: schedule._id,
            deployment_id: schedule.deployment_id ?? null,
            pipeline_id: schedule.pipeline_id ?? null,
            scheduled_at: scheduledAt,
            requested_by: requestedBy,
            outcome,
            run_id: runId ? new Types.ObjectId(String(runId)) : null,
            message,
            recorded_at: new Date(),
          },
        ],
        { session },
      );
      if (outcome !== 'fired') {
        await recordTickSkipped({ organizationId: schedule.organization_id, scheduleId: schedule._id, scheduleName: schedule.name, deploymentId: schedule.deployment_id ?? null, pipelineId: schedule.pipeline_id ?? null, scheduledAt, outcome, message }, session);
      }
      // Skipped by Bosun itself (a refused tick's schedule.tick entry is the schedule's own): in the trail too.
      if (SKIPPED_BY_BOSUN.has(outcome)) {
        const details = { schedule_id: String(schedule._id), scheduled_at: scheduledAt.toISOString(), message, ...(requestedBy ? { requested_by: requestedBy } : {}) };
        await recordSystemDecision({ organizationId: String(schedule.organization_id), by: 'schedule clock', action: 'schedule.tick', target: scheduleTargetOf(schedule), details, outcome }, session);
      }
    });
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}

/** The tick recorded for a due time, if any. */
export const tickAt = (scheduleId: Types.ObjectId | string, scheduledAt: Date, requestedBy: Actor | null = null) =>
  ScheduleTickModel.findOne({ schedule_id: scheduleId, scheduled_at: scheduledAt, ...(requestedBy ? { 'requested_by.id': requestedBy.id } : { requested_by: null }) }).lean<ScheduleTick>();

/** Ticks due up to `until` are accounted for. */
export const advanceLedger = (id: Types.ObjectId, until: Date) => ScheduleModel.updateOne({ _id: id, ledger_until: { $lt: until } }, { $set: { ledger_until: until } });

/**
 * This schedule's fired ticks (the clock's and run-nows) whose runs are still going, oldest first,
 * among its `recent` latest fired ticks.
 */
export async function unfinishedTicksOf(scheduleId: Types.ObjectId, recent: number): Promise<Array<{ run_id: Types.ObjectId; scheduled_at: Date }>> {
  const fired = await ScheduleTickModel.find({ schedule_id: scheduleId, outcome: 'fired', run_id: { $ne: null } }, { run_id: 1, scheduled_at: 1 }).sort({ scheduled_at: -1 }).limit(recent).lean();
  if (!fired.length) return [];
  const going = await runsGoing(fired.map((t) => t.run_id!));
  return fired
    .filter((t) => going.some((id) => id.equals(t.run_id!)))
    .map((t) => ({ run_id: t.run_id!, scheduled_at: t.scheduled_at }))
    .reverse();
}
