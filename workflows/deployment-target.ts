import { CancellationScope, condition, isCancellation, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { failure } from '../src/domain/contracts/failure-types';
import type { RunResult, RunStepDefinition, TargetRunInput } from '../src/domain/contracts/runs';
import { isPatched, PATCHES } from './patches';
import { bookkeeping } from './run-activities';
import { executeRun } from './run-steps';
import { releaseTo, runInTurn, turnSignal } from './run-turn';

/**
 * One target of a fleet run (a child of its fleet run's workflow): takes a place in its server's
 * queue when its batch starts, and the server's turn with it when nothing is ahead of it there;
 * otherwise waits for the queue to give it its turn — as a one-server run does (runInTurn).
 */
export async function deploymentTargetWorkflow(target: TargetRunInput): Promise<RunResult> {
  if (isPatched(PATCHES.runsTakeTheirTurns)) {
    return runInTurn(target, () => bookkeeping.takeTurn({ runId: target.runId, serverId: target.serverId, organizationId: target.organizationId }));
  }
  return recordedTargetWorkflow(target);
}

/** Targets started before runs took their turns (PATCHES.runsTakeTheirTurns), as their histories replay. */
async function recordedTargetWorkflow(target: TargetRunInput): Promise<RunResult> {
  const turnsInDatabase = isPatched(PATCHES.turnsInDatabase);
  let turn = false;
  let begun: RunStepDefinition[] | null | undefined;
  setHandler(turnSignal, () => {
    turn = true;
  });
  const giveBack = () => releaseTo(target);
  try {
    const place = { runId: target.runId, serverId: target.serverId, organizationId: target.organizationId };
    const queued = await CancellationScope.nonCancellable(() => (turnsInDatabase ? bookkeeping.takeTargetTurn(place) : bookkeeping.queueTarget(place)));
    if ('failed' in queued) {
      setCurrentDetails(`not run: ${queued.failed}`);
      throw failure('DeploymentRunFailed', queued.failed);
    }
    if ('turn' in queued) begun = queued.steps;
    else {
      setCurrentDetails(`waiting for its turn on ${target.serverTitle}`);
      await condition(() => turn);
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => bookkeeping.cancelQueuedRun({ runId: target.runId }));
    if (turn) await giveBack();
    throw error;
  }
  try {
    return await executeRun(target, begun);
  } finally {
    if (turn) await giveBack();
  }
}
