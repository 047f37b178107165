import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import { deploymentRunWorkflowId, RELEASED_SIGNAL, runSearchAttributes, runWorkflowMetadata, TURN_SIGNAL, WAKE_QUEUE_SIGNAL, type QueuedRun, type RunQueueInput } from './contracts';
import { deploymentRunWorkflow } from './deployment-run';

export const wakeSignal = defineSignal(WAKE_QUEUE_SIGNAL);
export const releasedSignal = defineSignal<[string]>(RELEASED_SIGNAL);

// One database read: a local activity, with no task round trip.
const { nextQueuedRun, endedRun, failQueuedTarget } = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
});

/**
 * The runs of one server, one at a time, in trigger order: each time, the queued run with the lowest
 * place in the queue (a per-server counter taken at trigger time). Triggers wake it; it ends when
 * idle, and the next wake starts it again.
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
      setCurrentDetails('idle: no run queued');
      // Nothing queued: wait for a trigger. A wake that arrived during the read makes us read again.
      if (woken || (await condition(() => woken, '10 minutes'))) continue;
      await condition(allHandlersFinished);
      if (!woken) return;
      continue;
    }
    if (run.fleetTargetWorkflowId) {
      await giveTurn(run, released);
      continue;
    }
    let child;
    try {
      child = await startChild(deploymentRunWorkflow, {
        workflowId: deploymentRunWorkflowId(run.runId),
        args: [run],
        typedSearchAttributes: runSearchAttributes(run),
        memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
        ...runWorkflowMetadata(run),
        // If this queue is ever terminated, its running deployment is cancelled cleanly, not cut off.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
    } catch {
      // Its workflow already runs (left by an earlier queue): let it finish rather than spin.
      setCurrentDetails(`waiting: the workflow of run ${run.runId} (${run.deploymentName}) is already running`);
      await sleep('5 seconds');
      continue;
    }
    setCurrentDetails(`running ${run.deploymentName} (run ${run.runId}, triggered by ${run.triggeredBy})`);
    try {
      await child.result();
    } catch {
      // A failed or cancelled run is an ordinary outcome, recorded by the run itself: the queue moves on.
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof serverRunQueueWorkflow>(input);
    }
  }
}

/**
 * A fleet run's target: its workflow (a child of its fleet run's) is told it is its turn, and the
 * queue waits until it gives the turn back, or its run has ended (checked each minute: a target
 * whose workflow was terminated never gives it back).
 */
async function giveTurn(run: QueuedRun, released: Set<string>): Promise<void> {
  setCurrentDetails(`running ${run.deploymentName} (target run ${run.runId} of a fleet run, triggered by ${run.triggeredBy})`);
  try {
    await getExternalWorkflowHandle(run.fleetTargetWorkflowId!).signal(TURN_SIGNAL);
  } catch {
    // Its workflow is gone: nothing will run it.
    await failQueuedTarget({ runId: run.runId, error: 'The target’s workflow ended before its turn (terminated in Temporal?)' });
    return;
  }
  while (!released.has(run.runId)) {
    if (await condition(() => released.has(run.runId), '1 minute')) break;
    const ended = await endedRun({ runId: run.runId });
    if (!ended || !['queued', 'running'].includes(ended.status)) break;
  }
  released.delete(run.runId);
}
