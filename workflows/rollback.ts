import { executeChild, ParentClosePolicy, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { DecidingActor, QueuedRun, RollbackRunInput } from '../src/domain/contracts/runs';
import { runSearchAttributes } from '../src/domain/contracts/search-attributes';
import { deploymentRunWorkflowId } from '../src/domain/contracts/workflow-ids';
import { deploymentRunWorkflow } from './deployment-run';
import { bookkeeping } from './run-activities';

/** How often a rollback whose runs are not all this workflow's children checks that they ended. */
const PROGRESS_CHECK = '10 seconds';

/**
 * Rolls a halted fleet run back: the rollback steps on every server the run touched, newest batch
 * first, each server's rollback a run of its own (a child workflow that takes its server's turn like
 * any run, with BOSUN_ROLLBACK_REASON). A rollback that fails on one server does not stop the others.
 * Its summary ("rolled back on 4 of 4 touched servers"), or null when there was nothing to roll back.
 */
export async function rollBack(runId: string, reason: string, requestedBy: DecidingActor | null = null): Promise<string | null> {
  const plan = await bookkeeping.prepareRollback({ runId, reason, requestedBy });
  if (!plan) return null;
  for (const [index, batch] of plan.batches.entries()) {
    setCurrentDetails(`rolling back: ${plan.touched} touched servers, newest batch first (${index + 1} of ${plan.batches.length})`);
    await Promise.allSettled(batch.map((run) => rollbackRun(run)));
  }
  // Each rollback run's end is in the store, whoever ran it (a worker's sweep may have started one).
  let progress = await bookkeeping.rollbackProgress({ runId });
  while (progress.unfinished > 0) {
    await sleep(PROGRESS_CHECK);
    progress = await bookkeeping.rollbackProgress({ runId });
  }
  const summary = await bookkeeping.finishRollback({ runId, progress });
  setCurrentDetails(summary);
  return summary;
}

function rollbackRun(run: QueuedRun) {
  return executeChild(deploymentRunWorkflow, {
    workflowId: deploymentRunWorkflowId(run.runId),
    args: [run],
    typedSearchAttributes: runSearchAttributes(run),
    staticSummary: `${run.deploymentName} on ${run.serverTitle ?? run.serverId}`,
    staticDetails: `**Rollback run** ${run.runId}\n\n**Server** ${run.serverTitle ?? run.serverId} (${run.serverId})`,
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
}

/**
 * A rollback a person asked for, of a finished fleet run that failed (its deployment's rollback not
 * automatic, or run again): `deployment-rollback-<run id>`. Completes with the summary; fails when
 * a server's rollback failed.
 */
export async function deploymentRollbackWorkflow(input: RollbackRunInput): Promise<string> {
  const summary = await rollBack(input.runId, input.reason, input.requestedBy);
  return summary ?? 'nothing to roll back';
}
