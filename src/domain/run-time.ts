import type { RunWaitsState } from './events';

/*
 * A run's time, split: how long it ran, and how long it waited at approval gates, paused and frozen.
 * Pure, from the run as GET and its events show it, so the API and the console count alike (the
 * console each second, with its own clock).
 */

/** Whole seconds: running, and waiting by kind. */
export interface TimeSplit {
  running: number;
  approval: number;
  paused: number;
  frozen: number;
}

const NO_WAITS: RunWaitsState = { approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: null };

/** A run's time from its start to its end (or `now`), running apart from waiting; null before it starts. */
export function timeSplit(run: { started_at: string | null; completed_at: string | null; waits?: RunWaitsState | null }, now = Date.now()): TimeSplit | null {
  if (!run.started_at) return null;
  const end = run.completed_at ? Date.parse(run.completed_at) : now;
  const waits = run.waits ?? NO_WAITS;
  const current = waits.current;
  const ongoingMs = current ? Math.max(0, end - Date.parse(current.since)) : 0;
  const ongoing = (kind: NonNullable<RunWaitsState['current']>['for']) => (current?.for === kind ? Math.round(ongoingMs / 1000) : 0);
  const closed = waits.approval_seconds + waits.paused_seconds + waits.frozen_seconds;
  // Rounded apart from the wait going on, so the time it ran stands still while it waits.
  const running = Math.max(0, Math.round((end - ongoingMs - Date.parse(run.started_at)) / 1000) - closed);
  return { running, approval: waits.approval_seconds + ongoing('approval'), paused: waits.paused_seconds + ongoing('pause'), frozen: waits.frozen_seconds + ongoing('freeze') };
}

/** All the waiting in a split. */
export const waitingOf = (split: TimeSplit) => split.approval + split.paused + split.frozen;
