/* The statuses of runs, their targets and their steps: what the API, the console, the CLI and the tests read a run's state by. */

/**
 * A run's statuses. `awaiting_approval`, `paused` and `frozen` are a fleet run's, between batches:
 * it has begun (like `running`) and holds no server while it waits for people (or, frozen, for a
 * change freeze to lift). A one-server run whose turn came during a freeze is `frozen` too, before
 * its first step (holding its server's turn).
 */
export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'paused', 'frozen', 'success', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['success', 'failed', 'cancelled'];
/** A run that has begun and not ended: running, or (a fleet run) waiting between batches. */
export const BEGUN_RUN_STATUSES = ['running', 'awaiting_approval', 'paused', 'frozen'] as const;
export type BegunRunStatus = (typeof BEGUN_RUN_STATUSES)[number];
/** Every status of a run that has not ended. */
export const UNFINISHED_RUN_STATUSES = ['queued', ...BEGUN_RUN_STATUSES] as const;
export const STEP_STATUSES = ['pending', 'running', 'success', 'failed', 'skipped', 'cancelled'] as const;
/** A fleet run's target: a run's statuses, or skipped (its batch never started, or a retry found nothing left to do). */
export const TARGET_STATUSES = [...RUN_STATUSES, 'skipped'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];
