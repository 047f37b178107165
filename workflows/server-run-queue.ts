import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { runWorkflowMetadata, type NextRun, type QueuedRun, type QueueWake, type RunQueueInput } from '../src/domain/contracts/runs';
import { runSearchAttributes } from '../src/domain/contracts/search-attributes';
import { deploymentRunWorkflowId, RELEASED_SIGNAL, TURN_SIGNAL, WAKE_QUEUE_SIGNAL } from '../src/domain/contracts/workflow-ids';
import { deploymentRunWorkflow } from './deployment-run';
import { isPatched, PATCHES } from './patches';
import { bookkeeping } from './run-activities';

/** "Runs wait for their turn": the runs that asked (the queue reads them all from the database in order; wakes may coalesce). */
export const wakeSignal = defineSignal<[QueueWake?]>(WAKE_QUEUE_SIGNAL);
export const releasedSignal = defineSignal<[string]>(RELEASED_SIGNAL);

/** How long an idle queue waits for a wake before it ends (the next wake starts it again). */
const IDLE_FOR = '10 minutes';
/** How often the queue checks on a run it gave the turn to that has not given it back. */
const HOLDER_CHECK = '1 minute';

const { nextQueuedRun, endedRun, failQueuedRun } = bookkeeping;

/**
 * A server's run queue: gives the server's turn to the runs waiting for it, one at a time, in the
 * order of their places (taken at trigger time, or when a fleet target's batch starts). A trigger
 * wakes it, naming its run; a fleet target with nothing ahead of it takes the turn without the queue,
 * one that must wait wakes the queue too. The queue ends when idle, and the next wake starts it again.
 */
export async function serverRunQueueWorkflow(input: RunQueueInput): Promise<void> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  const released = new Set<string>();
  setHandler(releasedSignal, (runId) => {
    released.add(runId);
  });

  for (;;) {
    woken = false;
    const run = await nextQueuedRun({ serverId: input.serverId });
    if (!run) {
      setCurrentDetails('idle: no run waiting for its turn');
      // Nothing waiting: wait for a wake. A wake that arrived during the read makes us read again.
      if (woken || (await condition(() => woken, IDLE_FOR))) continue;
      await condition(allHandlersFinished);
      if (!woken) return;
      continue;
    }
    if (isPatched(PATCHES.runsTakeTheirTurns)) await handTurn(run, released);
    else if (run.fleetTargetWorkflowId) {
      await waitForRelease({ ...run, workflowId: run.fleetTargetWorkflowId, fleetTarget: true }, released, true);
      continue;
    } else if (!(await recordedStartChild(run))) continue;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof serverRunQueueWorkflow>(input);
    }
  }
}

/**
 * Gives the turn to the next run and waits until the run gives it back. A one-server run has no
 * workflow yet: it is started here, its turn given. A run whose workflow exists (a fleet target, or
 * a one-server run a worker's sweep started) is told. A run whose workflow ended before its turn
 * (terminated in Temporal) fails, so the queue moves on.
 */
async function handTurn(run: NextRun, released: Set<string>): Promise<void> {
  setCurrentDetails(`turn given to ${run.deploymentName} (run ${run.runId}, triggered by ${run.triggeredBy})`);
  if (!run.fleetTarget) {
    const child = await startRunChild(run);
    if (child) {
      // A failed or cancelled run is an ordinary outcome, recorded by the run itself: the queue moves on.
      await child.result().catch(() => undefined);
      return;
    }
  }
  // Its workflow runs already (or ran): tell it.
  if (await tellTurn(run)) return waitForRelease(run, released);
  await failQueuedRun({ runId: run.runId, error: 'The run’s workflow ended before its turn came (terminated in Temporal?)' });
}

/** "Your turn", to a run's workflow (naming the run to a workflow it shares); false when it does not run (never started, or ended). */
async function tellTurn(run: NextRun): Promise<boolean> {
  try {
    const handle = getExternalWorkflowHandle(run.workflowId);
    await (run.sharedWorkflow ? handle.signal<[string]>(TURN_SIGNAL, run.runId) : handle.signal(TURN_SIGNAL));
    return true;
  } catch (error) {
    if (isCancellation(error)) throw error;
    return false;
  }
}

/** A one-server run's workflow, started as this queue's child with its turn given; null when one exists or existed. */
async function startRunChild(run: NextRun) {
  const given: QueuedRun = {
    runId: run.runId,
    organizationId: run.organizationId,
    deploymentId: run.deploymentId,
    serverId: run.serverId,
    deploymentName: run.deploymentName,
    triggeredBy: run.triggeredBy,
    serverTitle: run.serverTitle,
  };
  try {
    return await startChild(deploymentRunWorkflow, {
      workflowId: deploymentRunWorkflowId(run.runId),
      args: [given],
      typedSearchAttributes: runSearchAttributes(given),
      memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
      ...runWorkflowMetadata(given),
      // One run, one workflow: a finished one is never started again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      // If this queue is ever terminated, its running deployment is cancelled cleanly, not cut off.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return null;
    throw error;
  }
}

/**
 * Waits until the run given the turn gives it back, or its run has ended (checked each minute: a run
 * whose workflow was terminated never gives it back). `signalled`: told already (by the old branch).
 */
async function waitForRelease(run: NextRun, released: Set<string>, recorded = false): Promise<void> {
  if (recorded) {
    setCurrentDetails(`running ${run.deploymentName} (target run ${run.runId} of a fleet run, triggered by ${run.triggeredBy})`);
    try {
      await getExternalWorkflowHandle(run.workflowId).signal(TURN_SIGNAL);
    } catch {
      await bookkeeping.failQueuedTarget({ runId: run.runId, error: 'The target’s workflow ended before its turn (terminated in Temporal?)' });
      return;
    }
  }
  while (!released.has(run.runId)) {
    if (await condition(() => released.has(run.runId), HOLDER_CHECK)) break;
    const ended = await endedRun({ runId: run.runId });
    if (!ended || !['queued', 'running'].includes(ended.status)) break;
  }
  released.delete(run.runId);
}

/** How queues started a one-server run before runs took their turns (PATCHES.runsTakeTheirTurns), as their histories replay; false: not started. */
async function recordedStartChild(run: QueuedRun): Promise<boolean> {
  let child;
  try {
    child = await startChild(deploymentRunWorkflow, {
      workflowId: deploymentRunWorkflowId(run.runId),
      args: [run],
      typedSearchAttributes: runSearchAttributes(run),
      memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
      ...runWorkflowMetadata(run),
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    setCurrentDetails(`waiting: the workflow of run ${run.runId} (${run.deploymentName}) is already running`);
    await sleep('5 seconds');
    return false;
  }
  setCurrentDetails(`running ${run.deploymentName} (run ${run.runId}, triggered by ${run.triggeredBy})`);
  await child.result().catch(() => undefined);
  return true;
}
