import type { DeploymentRunUpdatedEvent, RunFreezeState, RunGateState, RunPauseState, RunRollbackState, RunStepState, RunTargetState, RunWaitsState } from './events';

/*
 * Following a run live, as every client of the Socket.IO contract does it (the console's run page,
 * `bosun deploy --wait`): a snapshot — the subscription's answer, or the run read again over HTTP —
 * then its events applied in `seq` order, a fleet target's by its own `seq`. Pure: no socket, no
 * DOM, no node API; each client wires its socket and its HTTP reads to it.
 */

export const SUMMARY_STATUSES = ['success', 'failed', 'running', 'queued', 'skipped', 'cancelled'] as const;
export type RunSummary = { total: number } & Record<(typeof SUMMARY_STATUSES)[number], number>;

/** What following reads and writes of a run as GET shows it (a client's own type of it has more). */
export interface FollowedRun {
  seq: number;
  status: string;
  /** A fleet run's strategy; null for a one-server run. */
  strategy: object | null;
  started_at: string | null;
  completed_at: string | null;
  duration_seconds: number | null;
  error: string | null;
  steps: RunStepState[];
  targets: RunTargetState[];
  summary: RunSummary;
  gate?: RunGateState | null;
  pause?: RunPauseState | null;
  rollback?: RunRollbackState | null;
  freeze?: RunFreezeState | null;
  waits?: RunWaitsState;
}

/**
 * What an event did: `held` (it came before the first snapshot: applied on it), `ignored` (another
 * run's, or what is shown already has it), `applied`, or `gap` (applied as far as it goes, but an
 * earlier event was missed, and the output it carried with it: read the run again).
 */
export type Outcome = 'held' | 'ignored' | 'applied' | 'gap';

/** A run's targets counted by status. */
export function summaryOf(targets: Array<Pick<RunTargetState, 'status'>>): RunSummary {
  const summary: RunSummary = { total: targets.length, success: 0, failed: 0, running: 0, queued: 0, skipped: 0, cancelled: 0 };
  for (const t of targets) if (t.status in summary && t.status !== 'total') summary[t.status as keyof RunSummary] += 1;
  return summary;
}

/** Whole seconds from start to end, as the API counts `duration_seconds`. */
const secondsBetween = (from: string | null, to: string | null) => (from && to ? Math.round((Date.parse(to) - Date.parse(from)) / 1000) : null);

const isFleet = (run: FollowedRun) => run.strategy !== null;

/** The run with these targets; a fleet run's summary counts them. */
function withTargets<R extends FollowedRun>(run: R, targets: RunTargetState[]): R {
  return { ...run, targets, summary: isFleet(run) ? summaryOf(targets) : run.summary };
}

/** A change of the run itself (its events carry its whole state but for output). A one-server run is also its own one target. */
function applyOwn<R extends FollowedRun>(run: R, event: DeploymentRunUpdatedEvent & { seq: number }): R {
  const status = event.status ?? run.status;
  const started_at = event.started_at ?? run.started_at;
  const completed_at = event.completed_at ?? run.completed_at;
  const steps = run.steps.map((step, index) => ({ ...step, ...(event.steps[index] ?? {}) }));
  const next = {
    ...run,
    seq: event.seq,
    status,
    started_at,
    completed_at,
    error: event.error,
    steps,
    duration_seconds: secondsBetween(started_at, completed_at) ?? run.duration_seconds,
    // Events of a server of before gates carry neither.
    ...(event.gate !== undefined ? { gate: event.gate, pause: event.pause } : {}),
    ...(event.rollback !== undefined ? { rollback: event.rollback } : {}),
    ...(event.freeze !== undefined ? { freeze: event.freeze } : {}),
    ...(event.waits !== undefined ? { waits: event.waits } : {}),
  };
  if (isFleet(run) || run.targets.length !== 1) return next;
  const target = { ...run.targets[0]!, status, started_at, completed_at, error: event.error, seq: event.seq, steps: event.steps };
  return { ...next, targets: [target], summary: summaryOf([target]) };
}

/** A fleet target's change: the target as the event shows it (whole, but for output). */
function applyTarget<R extends FollowedRun>(run: R, changed: RunTargetState): { run: R; outcome: Outcome } {
  const known = run.targets.find((t) => t.server_id === changed.server_id);
  if (!known) return { run, outcome: 'gap' };
  if (changed.seq <= known.seq) return { run, outcome: 'ignored' };
  const targets = run.targets.map((t) => (t === known ? { ...t, ...changed } : t));
  return { run: withTargets(run, targets), outcome: changed.seq === known.seq + 1 ? 'applied' : 'gap' };
}

/** Applies one event to a run: the run as it is after it, and what the event did. */
export function applyRunEvent<R extends FollowedRun>(run: R, event: DeploymentRunUpdatedEvent): { run: R; outcome: Outcome } {
  if (event.target) return applyTarget(run, event.target);
  if (event.seq === null || event.seq <= run.seq) return { run, outcome: 'ignored' };
  return { run: applyOwn(run, { ...event, seq: event.seq }), outcome: event.seq === run.seq + 1 ? 'applied' : 'gap' };
}

/**
 * Takes a snapshot into what is shown: the newer of the two by `seq`, and each fleet target the
 * newer of its two (a re-read may cross events on the way).
 */
export function mergeSnapshot<R extends FollowedRun>(shown: R | null, snapshot: R): R {
  if (!shown) return snapshot;
  const [base, other] = snapshot.seq >= shown.seq ? [snapshot, shown] : [shown, snapshot];
  if (!isFleet(base)) return base;
  const newer = new Map(other.targets.map((t) => [t.server_id, t]));
  return withTargets(
    base,
    base.targets.map((t) => {
      const o = newer.get(t.server_id);
      return o && o.seq > t.seq ? o : t;
    }),
  );
}

/**
 * One run followed: `take` each snapshot, `apply` each event of the socket. Events that come before
 * the first snapshot (a server may send them before its answer) are held and applied on it.
 */
export function followRun<R extends FollowedRun>(runId: string) {
  let shown: R | null = null;
  const early: DeploymentRunUpdatedEvent[] = [];

  const apply = (event: DeploymentRunUpdatedEvent): Outcome => {
    if (event.run_id !== runId) return 'ignored';
    if (!shown) {
      early.push(event);
      return 'held';
    }
    const applied = applyRunEvent(shown, event);
    shown = applied.run;
    return applied.outcome;
  };

  return {
    /** The run as followed so far; null before the first snapshot. */
    get run(): R | null {
      return shown;
    },
    /** A snapshot (the subscription's answer, or a re-read): taken where it is newer; the events held until then applied on it, each with what it did. */
    take(snapshot: R): Array<{ event: DeploymentRunUpdatedEvent; outcome: Outcome }> {
      shown = mergeSnapshot(shown, snapshot);
      return early.splice(0).map((event) => ({ event, outcome: apply(event) }));
    },
    apply,
  };
}
