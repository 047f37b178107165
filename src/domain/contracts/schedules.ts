import type { DecidingActor as Actor } from './runs';

/*
 * What the schedules' Temporal side and Bosun agree on: the tick workflow's input and result, and
 * what its activities take and answer.
 */

/** A tick: the clock's (its due time is the one Temporal stamps on it), or a run-now a person asked for. */
export interface ScheduledRunInput {
  scheduleId: string;
  organizationId: string;
  /** What the schedule runs: a deployment, or (deploymentId null) a pipeline. */
  deploymentId: string | null;
  pipelineId?: string | null;
  /** A run-now: who asked, and when (the tick's time). Absent for the clock's ticks. */
  requestedBy?: Actor | null;
  requestedAt?: string | null;
  /** A run-now under overlap `buffer_one`: the runs of earlier ticks it waits for before it fires. */
  after?: string[];
  /** A run-now under overlap `cancel_other`: the runs of earlier ticks it cancels before it fires. */
  cancelling?: string[];
}

/** What a tick came to: a run started (`fired`), or why none did. */
export interface TickOutcome {
  outcome: 'fired' | 'frozen' | 'forbidden' | 'refused' | 'gone';
  runId: string | null;
  message: string | null;
}

export interface FireTickInput {
  scheduleId: string;
  /** When the tick was due (before jitter), ISO 8601. */
  scheduledAt: string;
  requestedBy: Actor | null;
}

export interface ScheduledRunResult extends TickOutcome {
  /** The run's final status, when one started. */
  runStatus: string | null;
}

/**
 * What starts a tick's run and stops it: the trigger path every client uses (src/api/schedules/ticks.ts),
 * given to the worker's activities when Bosun is composed.
 */
export interface ScheduledRunStarter {
  fire(input: FireTickInput): Promise<TickOutcome>;
  cancel(runId: string, reason: string): Promise<void>;
}
