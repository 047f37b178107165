/**
 * How `bosun deploy` ends, for CI: 0 success, 1 failed/cancelled (or not done within --timeout), 2
 * usage or connection trouble, 4 an approval gate rejected, 5 an approval gate expired.
 */
export class DeployExit extends Error {
  constructor(readonly code: 0 | 1 | 2 | 4 | 5 | 6, message: string) {
    super(message);
  }
}

/** `bosun deploy` refused because a change freeze covers the deployment's servers (nothing started). */
export const FROZEN_EXIT = 6 as const;

/** The exit code of a run that ended: its gate's outcome when a gate stopped it, else its status. */
export function exitCodeOf(run: { status: string; gate?: { outcome: string | null } | null }): 0 | 1 | 4 | 5 {
  if (run.status === 'success') return 0;
  if (run.status === 'failed' && run.gate?.outcome === 'rejected') return 4;
  if (run.status === 'failed' && run.gate?.outcome === 'expired') return 5;
  return 1;
}

/** A pipeline run's exit code, as a deployment run's: a stage's gate rejected (4) or expired (5) says why it failed. */
export function pipelineExitCode(run: { status: string; stages: Array<{ approval: { outcome: string | null } | null }> }): 0 | 1 | 4 | 5 {
  if (run.status === 'success') return 0;
  const outcomes = run.stages.map((stage) => stage.approval?.outcome);
  if (run.status === 'failed' && outcomes.includes('rejected')) return 4;
  if (run.status === 'failed' && outcomes.includes('expired')) return 5;
  return 1;
}
