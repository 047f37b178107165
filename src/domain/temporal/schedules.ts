import { ScheduleNotFoundError, WorkflowExecutionAlreadyStartedError, type Client, type ScheduleOptions, type ScheduleOverlapPolicy } from '@temporalio/client';
import Long from 'long';
import type { Actor } from '../access/actor';
import type { ScheduledRunInput } from '../contracts/schedules';
import type { WorkflowSignatures } from '../contracts/signatures';
import { bufferedRunWorkflowId, requestedRunWorkflowId, scheduledRunWorkflowId, temporalScheduleId } from '../contracts/workflow-ids';
import { ScheduleModel, type OverlapPolicy, type Schedule } from '../schedules/model';
import { springForwardMakeUps } from '../time/cron';

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = { skip: 'SKIP', buffer_one: 'BUFFER_ONE', cancel_other: 'CANCEL_OTHER', allow_all: 'ALLOW_ALL' };
const MONTHS = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'] as const;
/** How far ahead a cron schedule carries its spring-forward make-ups (the start-up reconcile renews them). */
const MAKE_UP_YEARS = 3;

/** A tick workflow's input: the schedule, and what it runs (a deployment's schedule's input is as it always was). */
const tickTarget = (schedule: Schedule): ScheduledRunInput => ({
  scheduleId: schedule._id.toString(),
  organizationId: schedule.organization_id.toString(),
  deploymentId: schedule.deployment_id?.toString() ?? null,
  ...(schedule.pipeline_id ? { pipelineId: schedule.pipeline_id.toString() } : {}),
});

const isNotFound = (error: unknown) => error instanceof ScheduleNotFoundError || (error as { name?: string } | null)?.name === 'ScheduleNotFoundError';

/**
 * Bosun's schedules in Temporal: one Temporal Schedule per schedule document (`bosun-schedule-<id>`),
 * brought to the document — the source of truth — whenever it changes, and at start for all of them.
 * The Schedule starts `scheduledRunWorkflow` at each tick with Temporal's overlap policy, catch-up
 * window, jitter and pause; the document's `revision` rides in the action's memo, so which version
 * Temporal carries can be read back.
 */
export class ScheduleWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /** What Temporal is given for a schedule document. */
  options(schedule: Schedule, now = new Date()): ScheduleOptions {
    const id = schedule._id.toString();
    const spec: ScheduleOptions['spec'] = schedule.cron
      ? {
          cronExpressions: [schedule.cron],
          // Temporal skips a wall-clock time that a spring-forward removes; cron runs it right after the jump, and so does Bosun.
          calendars: springForwardMakeUps(schedule.cron, schedule.time_zone, now, new Date(now.getTime() + MAKE_UP_YEARS * 365 * 86_400_000)).map((m) => ({
            year: m.year,
            month: MONTHS[m.month - 1]!,
            dayOfMonth: m.day,
            hour: m.hour,
            minute: m.minute,
            second: 0,
            dayOfWeek: '*',
          })),
          timezone: schedule.time_zone,
        }
      : { intervals: [{ every: `${schedule.every_seconds ?? 3600}s` as const }], timezone: schedule.time_zone };
    if (schedule.jitter_seconds > 0) spec.jitter = `${schedule.jitter_seconds}s`;
    return {
      scheduleId: temporalScheduleId(id),
      spec,
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledRunWorkflow' satisfies keyof WorkflowSignatures,
        workflowId: scheduledRunWorkflowId(id),
        taskQueue: this.taskQueue,
        args: [tickTarget(schedule)],
        memo: { revision: schedule.revision },
        staticSummary: `schedule "${schedule.name}": a tick`,
      },
      policies: { overlap: OVERLAP[schedule.overlap as OverlapPolicy], catchupWindow: `${schedule.catch_up_window_seconds}s`, pauseOnFailure: false },
      state: { paused: schedule.paused, note: schedule.paused ? (schedule.pause_note ?? 'paused in Bosun') : (schedule.note ?? undefined) },
    };
  }

  /** Creates or updates the Temporal Schedule to carry the document as it is. */
  private async put(schedule: Schedule): Promise<void> {
    const options = this.options(schedule);
    const handle = this.client.schedule.getHandle(options.scheduleId);
    try {
      await handle.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: options.policies, state: options.state! }) as never);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.client.schedule.create(options).catch(async (created: Error) => {
        // Created meanwhile by another node: update that one instead.
        if (created.name !== 'ScheduleAlreadyRunning') throw created;
        await handle.update(() => ({ spec: options.spec, action: options.action, policies: options.policies, state: options.state! }) as never);
      });
    }
  }

  /**
   * Brings the Temporal Schedule to the schedule document as it is now (or removes it when the
   * document is gone). Last write wins on both: after each push the document is read again, and a
   * newer revision (another node's change meanwhile) is pushed too, so the last push is always the
   * latest document's.
   */
  async sync(scheduleId: string): Promise<void> {
    for (;;) {
      const schedule = await ScheduleModel.findById(scheduleId).lean<Schedule>();
      if (!schedule) return this.remove(scheduleId);
      await this.put(schedule);
      const now = await ScheduleModel.findById(scheduleId, { revision: 1 }).lean<{ revision: number }>();
      if (!now || now.revision === schedule.revision) {
        if (!now) await this.remove(scheduleId);
        return;
      }
    }
  }

  async remove(scheduleId: string): Promise<void> {
    await this.client.schedule
      .getHandle(temporalScheduleId(scheduleId))
      .delete()
      .catch((error) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /** The revision the Temporal Schedule carries, its next fire times, and whether it exists. */
  async describe(scheduleId: string): Promise<{ revision: number | null; nextActionTimes: Date[] } | null> {
    try {
      const description = await this.client.schedule.getHandle(temporalScheduleId(scheduleId)).describe();
      const memo = (description.action as { memo?: { revision?: number } }).memo;
      return { revision: memo?.revision ?? null, nextActionTimes: description.info.nextActionTimes };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** The times Temporal's scheduler matches between `from` and `to` (its own computation, DST and all). */
  async matchingTimes(scheduleId: string, from: Date, to: Date): Promise<Date[]> {
    const seconds = (d: Date) => ({ seconds: Long.fromNumber(Math.floor(d.getTime() / 1000)), nanos: (d.getTime() % 1000) * 1_000_000 });
    const answer = await this.client.workflowService.listScheduleMatchingTimes({
      namespace: this.client.options.namespace,
      scheduleId: temporalScheduleId(scheduleId),
      startTime: seconds(from),
      endTime: seconds(to),
    });
    return (answer.startTime ?? []).map((t) => new Date(Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1_000_000)));
  }

  /** The first `count` times Temporal's scheduler matches after `from` (a day, a month, then a year and more ahead). */
  async timesAfter(scheduleId: string, from: Date, count: number): Promise<Date[]> {
    for (const days of [1, 31, 400, 1500]) {
      const times = await this.matchingTimes(scheduleId, from, new Date(from.getTime() + days * 86_400_000));
      if (times.length >= count || days === 1500) return times.slice(0, count);
    }
    return [];
  }

  /**
   * A run-now: the tick workflow, started at once. `cancelling`: runs of earlier ticks it cancels
   * first (overlap cancel_other); `after`: runs it waits for first (overlap buffer_one — at most one
   * run-now waits so: null when one already does).
   */
  async runNow(schedule: Schedule, requestedBy: Actor, { after = [], cancelling = [] }: { after?: string[]; cancelling?: string[] } = {}): Promise<string | null> {
    const id = schedule._id.toString();
    const requestedAt = new Date().toISOString();
    const buffered = after.length > 0;
    try {
      await this.client.workflow.start<WorkflowSignatures['scheduledRunWorkflow']>('scheduledRunWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: buffered ? bufferedRunWorkflowId(id) : requestedRunWorkflowId(id, requestedAt),
        args: [{ ...tickTarget(schedule), requestedBy, requestedAt, ...(buffered ? { after } : {}), ...(cancelling.length ? { cancelling } : {}) }],
        staticSummary: `schedule "${schedule.name}": run now${buffered ? ' (buffered)' : ''}, asked by ${requestedBy.name}`,
      });
    } catch (error) {
      if (buffered && error instanceof WorkflowExecutionAlreadyStartedError) return null;
      throw error;
    }
    return requestedAt;
  }

  /**
   * Repairs drift both ways: every document gets its Temporal Schedule at its revision (created when
   * missing, updated when behind), and a Temporal Schedule of this Bosun's without a document is deleted.
   */
  async reconcile({ renew = false }: { renew?: boolean } = {}): Promise<{ created: number; updated: number; deleted: number }> {
    const counts = { created: 0, updated: 0, deleted: 0 };
    const known = new Set<string>();
    for await (const schedule of ScheduleModel.find({}, { _id: 1, revision: 1 }).lean().cursor()) {
      const id = schedule._id.toString();
      known.add(temporalScheduleId(id));
      const described = await this.describe(id);
      const behind = !described || described.revision !== schedule.revision;
      // `renew` (at start): every one pushed again, so a cron schedule's make-ups stay years ahead.
      if (behind || renew) await this.sync(id);
      if (!described) counts.created += 1;
      else if (behind) counts.updated += 1;
    }
    for await (const summary of this.client.schedule.list()) {
      if (!summary.scheduleId.startsWith('bosun-schedule-') || known.has(summary.scheduleId)) continue;
      const documentId = summary.scheduleId.slice('bosun-schedule-'.length);
      // A document created since the listing began: not drift.
      if (await ScheduleModel.exists({ _id: documentId }).catch(() => null)) continue;
      // Another Bosun's (another task queue on the same namespace): not ours to delete.
      const handle = this.client.schedule.getHandle(summary.scheduleId);
      const description = await handle.describe().catch(() => null);
      if (!description || description.action.taskQueue !== this.taskQueue) continue;
      await handle.delete().catch(() => undefined);
      counts.deleted += 1;
    }
    return counts;
  }
}
