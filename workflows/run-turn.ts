import { CancellationScope, condition, defineSignal, getExternalWorkflowHandle, isCancellation, setHandler } from '@temporalio/workflow';
import { failure } from '../src/domain/contracts/failure-types';
import { serverLabel, type QueuedRun, type RunResult, type RunStepDefinition, type TurnOutcome, type FrozenHold } from '../src/domain/contracts/runs';
import { RELEASED_SIGNAL, serverRunQueueWorkflowId, TURN_SIGNAL } from '../src/domain/contracts/workflow-ids';
import { executeRun, OWN_WORKFLOW, SHARED_WORKFLOW, type RunPlaceInWorkflow } from './run-steps';
import { bookkeeping } from './run-activities';

/** "Your turn": to a run's own workflow, without a word; to a workflow running several targets, the run's id. */
export const turnSignal = defineSignal<[string?]>(TURN_SIGNAL);

/** A run sharing its workflow with others (a target group's): the group keeps the turns given, and the workflow's details. */
export interface SharedTurns {
  given: (runId: string) => boolean;
  /** The run waits for its queue to give it the turn (true), or no longer does. */
  waiting: (runId: string, waits: boolean) => void;
}

/** How often a run waiting for its turn checks that it still waits, and wakes its queue again. */
const WAITING_CHECK = '1 minute';

/**
 * A run on its server, from asking for the server's turn to its end — one path for a one-server run
 * and a fleet target. `ask` takes the turn when nothing is ahead of the run there (the run begins
 * with it); otherwise the run waits for its queue to give it the turn (runs on one server never
 * interleave, whichever deployment they come from). Then its steps run; the run's end gives the turn
 * back, and a turn the queue gave is signalled back to the queue too. `shared`: the run shares its
 * workflow (a target group's), which holds the turns given; the run leaves the workflow's details alone.
 */
export async function runInTurn(run: QueuedRun, ask: () => Promise<TurnOutcome>, shared?: SharedTurns): Promise<RunResult> {
  let givenHere = false;
  if (!shared) {
    setHandler(turnSignal, () => {
      givenHere = true;
    });
  }
  const isGiven = () => (shared ? shared.given(run.runId) : givenHere);
  const where = shared ? SHARED_WORKFLOW : OWN_WORKFLOW;
  const giveBack = () => releaseTo(run);
  // Begun with the turn (taken without the queue): the steps to run.
  let begun: RunStepDefinition[] | null | undefined;
  let frozen: FrozenHold | null = null;
  try {
    const asked = await CancellationScope.nonCancellable(ask);
    if ('failed' in asked) {
      where.report(`not run: ${asked.failed}`);
      throw failure('DeploymentRunFailed', asked.failed);
    }
    if ('turn' in asked) {
      begun = asked.steps;
      frozen = asked.frozen ?? null;
    }
    else {
      shared?.waiting(run.runId, true);
      await waitForTurn(run, isGiven, where).finally(() => shared?.waiting(run.runId, false));
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled before its turn: it never runs (the queue skips a run that is no longer queued).
    await CancellationScope.nonCancellable(() => bookkeeping.cancelQueuedRun({ runId: run.runId }));
    if (isGiven()) await giveBack();
    throw error;
  }
  try {
    return await executeRun(run, begun, frozen, where);
  } finally {
    // The queue that gave a turn waits for it back; a turn taken without it was given back by the run's end.
    if (isGiven()) await giveBack();
  }
}

/** "Done with this server", to the queue that gave the turn. */
export const releaseTo = (run: Pick<QueuedRun, 'serverId' | 'runId'>) =>
  CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(serverRunQueueWorkflowId(run.serverId))
      .signal<[string]>(RELEASED_SIGNAL, run.runId)
      // The queue is gone (terminated): it reads the run's status when it comes back.
      .catch(() => undefined),
  );

/**
 * Waits for the queue's "your turn". Each minute the run checks that it still waits — a run
 * cancelled or closed meanwhile goes on to its begin, which finds how it ended — and wakes its queue
 * again, in case a wake was lost (a queue terminated by hand).
 */
async function waitForTurn(run: QueuedRun, given: () => boolean, where: RunPlaceInWorkflow): Promise<void> {
  where.report(`waiting for its turn on ${serverLabel(run)}`);
  const place = { runId: run.runId, serverId: run.serverId, organizationId: run.organizationId };
  while (!(await condition(given, WAITING_CHECK))) {
    if (!(await bookkeeping.stillWaiting(place))) return;
  }
}
