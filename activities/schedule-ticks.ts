import { Context } from '@temporalio/activity';
import type { FireTickInput, ScheduledRunStarter, TickOutcome } from '../src/domain/contracts/schedules';
import { tickRunStatus } from '../src/domain/schedules/tick-runs';

export interface ScheduleTickActivityDeps {
  /** Absent in a worker composed without the API's trigger path (then a tick cannot start). */
  scheduledRuns?: ScheduledRunStarter;
}

const POLL_MS = 2000;

/** A schedule's tick: its run started through the trigger path, waited for, or cancelled. */
export function createScheduleTickActivities({ scheduledRuns }: ScheduleTickActivityDeps) {
  const starter = () => {
    if (!scheduledRuns) throw new Error('This worker was composed without the trigger path schedules need');
    return scheduledRuns;
  };
  return {
    /** Starts the tick's run, or records why none starts (the tick is recorded either way, once). */
    async fireScheduledRun(input: FireTickInput): Promise<TickOutcome> {
      return starter().fire(input);
    },

    /** Waits until the run has ended (whatever ends it), heartbeating: its final status. */
    async awaitRunEnd({ runId }: { runId: string }): Promise<string> {
      const context = Context.current();
      for (;;) {
        // A deployment run, or a pipeline's schedule's pipeline run.
        const run = await tickRunStatus(runId);
        if (!run) return 'deleted';
        if (run.final) return run.status;
        context.heartbeat();
        await context.sleep(POLL_MS);
      }
    },

    /** Cancels the tick's run (its overlap policy let a later tick take over). */
    async cancelScheduledRun({ runId, reason }: { runId: string; reason: string }): Promise<void> {
      await starter().cancel(runId, reason);
    },
  };
}

export type ScheduleTickActivities = ReturnType<typeof createScheduleTickActivities>;
