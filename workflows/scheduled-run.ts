import { CancellationScope, isCancellation, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ScheduleTickActivities } from '../activities/schedule-ticks';
import type { ScheduledRunInput, ScheduledRunResult } from '../src/domain/contracts/schedules';

/** The due time Temporal stamps on a scheduled workflow (before jitter). */
const SCHEDULED_START_TIME = { name: 'TemporalScheduledStartTime', type: 'DATETIME' } as const;

/** Starting the run: quick database work and the trigger's checks; retried while Bosun cannot answer. */
const firing = proxyActivities<ScheduleTickActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** Waiting for the run to end: as long as it takes (a gate may wait days), heartbeating. */
const waiting = proxyActivities<ScheduleTickActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

/**
 * One tick of a schedule, started by its Temporal Schedule (or by the API for a run-now): the run
 * started through the same trigger as a person's — permissions, freezes, parameters, gates all
 * apply — as the schedule's service account, then waited for. The workflow lives as long as its
 * run, so the schedule's overlap policy (skip, buffer one, cancel the other, allow all) is about
 * runs; cancelled by `cancel_other`, it cancels its run.
 */
export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  const due = input.requestedAt ?? workflowInfo().typedSearchAttributes.get(SCHEDULED_START_TIME)?.toISOString() ?? new Date(workflowInfo().startTime).toISOString();
  // A run-now applies the schedule's overlap policy to the runs of earlier ticks still going.
  for (const runId of input.cancelling ?? []) {
    setCurrentDetails(`run now: cancelling run ${runId} of an earlier tick (overlap: cancel_other)`);
    await firing.cancelScheduledRun({ runId, reason: `a run-now of its schedule took over (overlap: cancel_other)${input.requestedBy ? `, asked by ${input.requestedBy.name}` : ''}` });
  }
  for (const runId of input.after ?? []) {
    setCurrentDetails(`run now, buffered: waits for run ${runId} of an earlier tick to end (overlap: buffer_one)`);
    await waiting.awaitRunEnd({ runId });
  }
  const fired = await firing.fireScheduledRun({ scheduleId: input.scheduleId, scheduledAt: due, requestedBy: input.requestedBy ?? null });
  if (fired.outcome !== 'fired' || !fired.runId) {
    setCurrentDetails(`tick of ${due}: no run (${fired.outcome}${fired.message ? `: ${fired.message}` : ''})`);
    return { ...fired, runStatus: null };
  }
  const runId = fired.runId;
  setCurrentDetails(`tick of ${due}: run ${runId} started; waiting for it to end`);
  try {
    const runStatus = await waiting.awaitRunEnd({ runId });
    setCurrentDetails(`tick of ${due}: run ${runId} ended ${runStatus}`);
    return { ...fired, runStatus };
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Another tick took over (overlap `cancel_other`), or the schedule went: its run stops too.
    await CancellationScope.nonCancellable(() => firing.cancelScheduledRun({ runId, reason: 'a later tick of its schedule took over (overlap: cancel_other)' }));
    setCurrentDetails(`tick of ${due}: cancelled, and its run ${runId} with it`);
    throw error;
  }
}
