import { Types } from 'mongoose';
import { actAsServiceAccount } from '../../domain/tokens/service';
import { DeploymentRunModel } from '../../domain/deployments/model';
import { openParameters } from '../../domain/deployments/parameters';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { MissingSecretError, resolveSecretReferences } from '../../domain/secrets/references';
import type { FireTickInput, ScheduledRunStarter, TickOutcome } from '../../domain/contracts/schedules';
import { ScheduleModel, type Schedule } from '../../domain/schedules/model';
import { recordTick, scheduleTargetOf, tickAt } from '../../domain/schedules/store';
import type { Logger } from '../../logger';
import { ApiError } from '../http/errors';
import type { DeploymentService } from '../deployments/service';
import type { PipelineRunService } from '../pipelines/run-service';
import { PipelineRunModel } from '../../domain/pipelines/model';
import { recordIntent, recordOutcome } from '../../domain/audit/pending-entries';

/** How long a tick's entry waits for its outcome (the trigger's retries included) before it counts as unknown. */
const TICK_PENDING_SECONDS = 3600;

/** Counts ticks by outcome (bosun_schedule_ticks_total). */
export type TickCounter = (outcome: string) => void;

/**
 * A tick's run, started the way every client's is: the deployment service's trigger (a pipeline's
 * schedule: the pipeline runs' trigger, which asks about every stage's deployment), as the
 * schedule's service account (its grants checked now, at the tick), with the schedule's parameters
 * and an Idempotency-Key of the schedule and due time — so a tick retried (its activity ran twice)
 * still starts one run. What the trigger refuses is recorded as the tick's reason: `frozen` (a
 * change freeze covers a target), `forbidden` (the account may not), `refused` (anything else it
 * said no to: no matching server, the organization's run limit reached, a parameter no longer valid).
 */
export function scheduledRunStarter({
  deployments,
  pipelineRuns,
  secretBox,
  log,
  countTick,
}: {
  deployments: DeploymentService;
  pipelineRuns: Pick<PipelineRunService, 'trigger' | 'cancel'>;
  secretBox: SecretBox;
  log: Logger;
  countTick: TickCounter;
}): ScheduledRunStarter {
  /**
   * The tick's audit entry, written before it tries to start its run (actor: the schedule, running as
   * its service account; or the person who asked for a run-now), keyed by the tick: a retried
   * activity writes no second entry.
   */
  const tickIntent = (schedule: Schedule, input: FireTickInput, key: string) =>
    recordIntent(
      {
        organizationId: schedule.organization_id.toString(),
        actor: { type: 'schedule', id: schedule._id.toString(), name: schedule.name, run_as: { id: schedule.run_as.id.toString(), name: schedule.run_as.name } },
        action: 'schedule.tick',
        target: scheduleTargetOf(schedule),
        details: { schedule_id: schedule._id.toString(), scheduled_at: new Date(input.scheduledAt).toISOString(), ...(input.requestedBy ? { requested_by: input.requestedBy } : {}) },
      },
      TICK_PENDING_SECONDS,
      `tick:${key}`,
    );

  async function record(schedule: Schedule, input: FireTickInput, outcome: TickOutcome, auditId?: string) {
    if (auditId) await recordOutcome(auditId, outcome.outcome === 'fired' ? 'ok' : outcome.outcome, { details: { run_id: outcome.runId, ...(outcome.message ? { message: outcome.message } : {}) } });
    const recorded = await recordTick({
      schedule,
      scheduledAt: new Date(input.scheduledAt),
      requestedBy: input.requestedBy,
      outcome: outcome.outcome === 'gone' ? 'refused' : outcome.outcome,
      runId: outcome.runId,
      message: outcome.message,
    });
    if (recorded) countTick(outcome.outcome);
    return outcome;
  }

  return {
    async fire(input) {
      const schedule = await ScheduleModel.findById(input.scheduleId).lean<Schedule>();
      if (!schedule) return { outcome: 'gone', runId: null, message: 'the schedule was deleted' };
      // A tick recorded already (this activity ran before and its answer was lost): the same answer.
      const earlier = await tickAt(schedule._id, new Date(input.scheduledAt), input.requestedBy);
      if (earlier) return { outcome: earlier.outcome as TickOutcome['outcome'], runId: earlier.run_id?.toString() ?? null, message: earlier.message ?? null };
      const key = `schedule-${schedule._id.toString()}-${input.requestedBy ? `now-${input.requestedBy.id}-` : ''}${new Date(input.scheduledAt).toISOString()}`;
      const auditId = await tickIntent(schedule, input, key);
      const principal = await actAsServiceAccount(schedule.run_as.id.toString());
      if (typeof principal === 'string') {
        return record(schedule, input, { outcome: 'forbidden', runId: null, message: `the service account ${schedule.run_as.name} it runs as is ${principal === 'disabled' ? 'disabled' : 'gone'}` }, auditId);
      }
      let parameters: Record<string, string>;
      try {
        // A parameter applied from Git as ${secret:NAME} takes the secret's value now.
        parameters = Object.fromEntries((await resolveSecretReferences(schedule.organization_id.toString(), openParameters(schedule, secretBox), secretBox)).map((p) => [p.name, p.value]));
      } catch (error) {
        if (!(error instanceof MissingSecretError)) throw error;
        return record(schedule, input, { outcome: 'refused', runId: null, message: `a parameter names a secret the organization lacks: ${error.message}` }, auditId);
      }
      const recorded = { schedule: { id: schedule._id, name: schedule.name, scheduled_at: new Date(input.scheduledAt) } };
      try {
        const { run } = schedule.pipeline_id
          ? await pipelineRuns.trigger(principal, schedule.pipeline_id.toString(), key, { parameters }, recorded)
          : await deployments.trigger(principal, schedule.deployment_id!.toString(), key, { parameters }, recorded);
        return record(schedule, input, { outcome: 'fired', runId: run._id.toString(), message: null }, auditId);
      } catch (error) {
        // Bosun could not answer (Temporal or MongoDB away): the activity retries.
        if (!(error instanceof ApiError) || error.status >= 500) {
          log.warn({ err: error, scheduleId: input.scheduleId }, 'a schedule’s tick could not start its run yet');
          throw error;
        }
        const outcome = error.code === 'frozen' ? 'frozen' : error.code === 'forbidden' || error.code === 'not_found' ? 'forbidden' : 'refused';
        const runs = schedule.pipeline_id ? 'pipeline' : 'deployment';
        const message = outcome === 'forbidden' ? `${schedule.run_as.name} (the service account it runs as) may not run this ${runs} now: ${error.message}` : error.message;
        return record(schedule, input, { outcome, runId: null, message }, auditId);
      }
    },

    async cancel(runId, reason) {
      const schedule = await scheduleOfRun(runId);
      if (!schedule) return;
      const principal = await actAsServiceAccount(schedule.run_as.id.toString());
      if (typeof principal === 'string') return;
      try {
        if (schedule.pipeline_id) await pipelineRuns.cancel(principal, schedule.pipeline_id.toString(), runId);
        else await deployments.cancelRun(principal, schedule.deployment_id!.toString(), runId);
      } catch (error) {
        // Finished meanwhile, or gone: nothing to stop.
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        log.info({ runId, reason, err: error.message }, 'a scheduled run was not cancelled');
      }
    },
  };
}

/** The schedule a run (a deployment run, or a pipeline run) was started by. */
async function scheduleOfRun(runId: string): Promise<Schedule | null> {
  const id = new Types.ObjectId(runId);
  type Started = { schedule: { id: Types.ObjectId } | null };
  const run = (await DeploymentRunModel.findById(id, { schedule: 1 }).lean<Started>()) ?? (await PipelineRunModel.findById(id, { schedule: 1 }).lean<Started>());
  return run?.schedule ? ScheduleModel.findById(run.schedule.id).lean<Schedule>() : null;
}
