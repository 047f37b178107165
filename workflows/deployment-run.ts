import type { QueuedRun, RunResult } from '../src/domain/contracts/runs';
import { bookkeeping } from './run-activities';
import { executeRun } from './run-steps';
import { runInTurn } from './run-turn';

/**
 * One deployment run on one server (`deployment-run-<run id>`). Started by its server's queue, as
 * its trigger asks, the queue gave it the turn already. Started with its place (by a worker's sweep,
 * when its queue's wake was lost), it takes the server's turn itself, or waits for its queue to give
 * it (runInTurn). Its outcome is the run's (executeRun).
 */
export async function deploymentRunWorkflow(run: QueuedRun): Promise<RunResult> {
  const { place } = run;
  if (place === undefined) return executeRun(run);
  return runInTurn(run, () => bookkeeping.takeTurn({ runId: run.runId, serverId: run.serverId, organizationId: run.organizationId, place }));
}
