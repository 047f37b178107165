import type { RunWaitsState } from '../events';
import { iso } from '../timestamps';
import type { DeploymentRun } from './model';

/**
 * How long a run waited, as the API and its events show it: the holds that ended (recorded by the
 * transitions that end them, gates.ts) and the one going on, read from what holds the run — a gate
 * not decided, a pause held, a freeze. A run that ended while held waited until its end.
 */
export function toWaitsState(r: Pick<DeploymentRun, 'waited' | 'gate' | 'pause' | 'freeze' | 'completed_at'>): RunWaitsState {
  const waited = { approval: r.waited?.approval ?? 0, pause: r.waited?.pause ?? 0, freeze: r.waited?.freeze ?? 0 };
  const current =
    r.gate && !r.gate.outcome
      ? { for: 'approval' as const, since: r.gate.opened_at }
      : r.pause?.paused_at
        ? { for: 'pause' as const, since: r.pause.paused_at }
        : r.freeze
          ? { for: 'freeze' as const, since: r.freeze.since }
          : null;
  if (current && r.completed_at) waited[current.for] += Math.max(0, r.completed_at.getTime() - current.since.getTime());
  const seconds = (ms: number) => Math.round(ms / 1000);
  return {
    approval_seconds: seconds(waited.approval),
    paused_seconds: seconds(waited.pause),
    frozen_seconds: seconds(waited.freeze),
    current: current && !r.completed_at ? { for: current.for, since: iso(current.since)! } : null,
  };
}
