import { useEffect, useState } from 'preact/hooks';
import { FINISHED, type Run } from '../api-types';
import { timeSplit, waitingOf } from '../../../domain/run-time';
import { seconds, summaryText } from './common';

type Target = Run['targets'][number];

/** What a hold is called where time or targets wait for it. */
const HOLD_WORDS = { approval: 'waiting for approval', pause: 'paused', freeze: 'frozen' } as const;
type Hold = keyof typeof HOLD_WORDS;

/**
 * A run's duration, running apart from waiting ("3 min 12 s running · 2 h 05 min waiting for
 * approval"), counted on each second while it has not ended; the plain duration when it never waited.
 */
export function RunDuration({ run }: { run: Run }) {
  const [now, setNow] = useState(Date.now);
  const ended = FINISHED.has(run.status);
  useEffect(() => {
    if (!run.started_at || ended) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [run.started_at, ended]);
  const split = timeSplit(run, now);
  if (!split) return <>{seconds(null)}</>;
  const current = run.waits.current?.for ?? null;
  const held: Array<[Hold, number]> = [
    ['approval', split.approval],
    ['pause', split.paused],
    ['freeze', split.frozen],
  ];
  const shown = held.filter(([hold, n]) => n > 0 || hold === current);
  if (!shown.length) return <>{seconds(waitingOf(split) + split.running)}</>;
  return (
    <span data-duration>
      {seconds(split.running)} running
      {shown.map(([hold, n]) => (
        <span key={hold} class={hold === current ? 'held-now' : undefined}>
          {' '}
          · {seconds(n)} {HOLD_WORDS[hold]}
        </span>
      ))}
    </span>
  );
}

/**
 * What holds a target that has not started beyond its turn: the gate the run waits at (for the
 * gate's batch and those after it; in a window, every target not started), the run's pause or its freeze. Null when it simply waits its
 * turn, or has started. The API keeps the target `queued`: this is the run's state, read beside it.
 */
export function holdOf(run: Pick<Run, 'status' | 'gate'>, target: Pick<Target, 'status' | 'batch'>): Hold | null {
  if (target.status !== 'queued') return null;
  // A window's gate opens once every target started before it has ended: the rest wait for it.
  if (run.status === 'awaiting_approval') return run.gate && run.gate.outcome === null && (run.gate.before_target !== null || target.batch >= run.gate.before_batch) ? 'approval' : null;
  if (run.status === 'paused') return 'pause';
  if (run.status === 'frozen') return 'freeze';
  return null;
}

/** A target's status as its card shows it: what holds it ("waiting for approval") in its own colour, or its status. */
export function TargetStatus({ run, target }: { run: Run; target: Target }) {
  const hold = holdOf(run, target);
  if (!hold) return <span class={`status status-${target.status}`}>{target.status}</span>;
  return (
    <span class={`status status-held status-held-${hold}`} title={`queued: ${hold === 'approval' ? `the run waits for approval before ${run.gate!.before_target !== null ? `target ${run.gate!.before_target}` : `batch ${run.gate!.before_batch}`}` : `the run is ${HOLD_WORDS[hold]}`}`}>
      {HOLD_WORDS[hold]}
    </span>
  );
}

/** The targets counted in words, those held counted apart from those queued ("1 success, 2 waiting for approval"). */
export function targetsText(run: Run): string {
  const held = new Map<Hold, number>();
  for (const t of run.targets) {
    const hold = holdOf(run, t);
    if (hold) held.set(hold, (held.get(hold) ?? 0) + 1);
  }
  const heldCount = [...held.values()].reduce((a, b) => a + b, 0);
  const counted = summaryText({ ...run.summary, queued: Math.max(0, run.summary.queued - heldCount) });
  return [counted, ...[...held].map(([hold, n]) => `${n} ${HOLD_WORDS[hold]}`)].filter(Boolean).join(', ');
}
