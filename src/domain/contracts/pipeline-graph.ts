/*
 * What runs next in a pipeline run, from how its stages stand: pure, so its workflow decides the
 * same way on every replay. A stage is ready once every stage it needs has ended; then `when` says
 * whether it runs or is skipped, and why.
 */

export interface GraphStage {
  name: string;
  needs: string[];
  when: 'success' | 'failure' | 'always';
}

/** How a stage stands: not yet begun, under way, or ended (with whether a failure is behind its end). */
export type Standing = { state: 'waiting' } | { state: 'underway' } | { state: 'ended'; status: 'success' | 'failed' | 'cancelled' | 'skipped'; failedUpstream: boolean };

export type Move = { stage: string; run: true } | { stage: string; run: false; reason: string; failedUpstream: boolean };

/** A need that ended other than in success, as a skipped stage's reason names it. */
function howItEnded(name: string, standing: Extract<Standing, { state: 'ended' }>): string {
  if (standing.status === 'failed') return `${name}, which failed`;
  if (standing.status === 'cancelled') return `${name}, which was cancelled`;
  return `${name}, which was skipped`;
}

/**
 * The stages to start or skip now. `cancelled`: the pipeline run was cancelled, so only `always`
 * stages still run (once their needs have ended); the others that have not begun are skipped.
 */
export function nextMoves(stages: readonly GraphStage[], standings: ReadonlyMap<string, Standing>, cancelled: boolean): Move[] {
  const moves: Move[] = [];
  for (const stage of stages) {
    if (standings.get(stage.name)?.state !== 'waiting') continue;
    const needs = stage.needs.map((name) => ({ name, standing: standings.get(name) ?? { state: 'waiting' as const } }));
    if (cancelled && stage.when !== 'always') {
      moves.push({ stage: stage.name, run: false, reason: 'the pipeline run was cancelled', failedUpstream: false });
      continue;
    }
    if (!needs.every((need) => need.standing.state === 'ended')) continue;
    const ended = needs.map((need) => ({ name: need.name, standing: need.standing as Extract<Standing, { state: 'ended' }> }));
    const failing = ended.filter((need) => need.standing.status === 'failed' || need.standing.failedUpstream);
    const notSucceeded = ended.filter((need) => need.standing.status !== 'success');
    if (stage.when === 'always') moves.push({ stage: stage.name, run: true });
    else if (stage.when === 'failure') {
      if (failing.length) moves.push({ stage: stage.name, run: true });
      else moves.push({ stage: stage.name, run: false, reason: stage.needs.length ? 'none of the stages it needs failed' : 'it runs only after a failure', failedUpstream: false });
    } else if (!notSucceeded.length) moves.push({ stage: stage.name, run: true });
    else {
      const first = notSucceeded[0]!;
      moves.push({ stage: stage.name, run: false, reason: `needs ${howItEnded(first.name, first.standing)}`, failedUpstream: failing.length > 0 });
    }
  }
  return moves;
}
