import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import {
  CANCEL_RUN_SIGNAL,
  deploymentRunWorkflowId,
  ENQUEUE_RUN_SIGNAL,
  runSearchAttributes,
  type QueuedRun,
  type RunQueueInput,
} from './contracts';
import { deploymentRunWorkflow } from './deployment-run';

export const enqueueRunSignal = defineSignal<[QueuedRun]>(ENQUEUE_RUN_SIGNAL);
export const cancelRunSignal = defineSignal<[{ runId: string }]>(CANCEL_RUN_SIGNAL);

const { cancelQueuedRun } = proxyActivities<DeploymentActivities>({ startToCloseTimeout: '30 seconds' });

/**
 * The runs of one server, one at a time, in the order they were triggered (the order of the
 * signals). Ends when idle; the next trigger starts it again with signal-with-start.
 */
export async function serverRunQueueWorkflow(input: RunQueueInput): Promise<void> {
  const pending: QueuedRun[] = [...input.pending];
  let current: string | null = null;

  setHandler(enqueueRunSignal, (run) => {
    // A retried trigger may enqueue the same run twice; the run itself also refuses to start twice.
    if (current !== run.runId && !pending.some((p) => p.runId === run.runId)) pending.push(run);
  });
  setHandler(cancelRunSignal, async ({ runId }) => {
    const index = pending.findIndex((p) => p.runId === runId);
    if (index >= 0) {
      pending.splice(index, 1);
      await cancelQueuedRun({ runId });
    } else if (current === runId) {
      await getExternalWorkflowHandle(deploymentRunWorkflowId(runId)).cancel();
    }
  });

  for (;;) {
    if (!(await condition(() => pending.length > 0, '10 minutes'))) {
      await condition(allHandlersFinished);
      // A trigger handled in this same activation must not be dropped by ending now.
      if (pending.length === 0) return;
      continue;
    }
    const run = pending.shift()!;
    current = run.runId;
    try {
      const child = await startChild(deploymentRunWorkflow, {
        workflowId: deploymentRunWorkflowId(run.runId),
        args: [run],
        typedSearchAttributes: runSearchAttributes(run),
        memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
        // If this queue is ever terminated, its running deployment is cancelled cleanly, not cut off.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
      await child.result();
    } catch {
      // A failed or cancelled run is recorded by the run itself; the queue moves on to the next one.
    }
    current = null;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof serverRunQueueWorkflow>({ ...input, pending });
    }
  }
}
