import type { QueuedRun, RunResult } from '../src/domain/contracts/runs';
import { bookkeeping } from './run-activities';
import { executeRun } from './run-steps';
import { runInTurn } from './run-turn';

/**
 * One deployment run on one server (`deployment-run-<run id>`). Started by its trigger with its
 * place in the server's queue (nothing was ahead of it), it takes the server's turn itself, or waits
 * for its queue to give it if another run took it meanwhile (runInTurn). Started by the queue (a run
 * triggered behind others, one queued before runs took their turns, or one whose trigger's start was
 * lost), the queue gave it the turn already. Its outcome is the run's (executeRun).
 */
export async function deploymentRunWorkflow(run: QueuedRun): Promise<RunResult> {
  const { place } = run;
  if (place === undefined) return executeRun(run);
  return runInTurn(run, () => bookkeeping.takeTurn({ runId: run.runId, serverId: run.serverId, organizationId: run.organizationId, place }));
}
