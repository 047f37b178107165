import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  ParentClosePolicy,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import { deploymentRunWorkflowId, runSearchAttributes, runWorkflowMetadata, WAKE_QUEUE_SIGNAL, type RunQueueInput } from './contracts';
import { deploymentRunWorkflow } from './deployment-run';

export const wakeSignal = defineSignal(WAKE_QUEUE_SIGNAL);

// One database read: a local activity, with no task round trip.
const { nextQueuedRun } = proxyLocalActivities<DeploymentActivities>({
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
