import type { Client } from '@temporalio/client';

/** One execution of a workflow: its events, the targets (child workflows) it started, and the most it had running at once. */
export interface Execution {
  events: number;
  targets: number;
  mostAtOnce: number;
}

/** Each execution of a workflow, from its first through every continue-as-new. */
export async function executionsOf(client: Client, workflowId: string): Promise<Execution[]> {
  const found: Execution[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.firstRunId ?? undefined;
  while (runId) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    let running = 0;
    let mostAtOnce = 0;
    for (const e of events) {
      if (e.startChildWorkflowExecutionInitiatedEventAttributes) mostAtOnce = Math.max(mostAtOnce, (running += 1));
      const ended =
        e.childWorkflowExecutionCompletedEventAttributes ??
        e.childWorkflowExecutionFailedEventAttributes ??
        e.childWorkflowExecutionCanceledEventAttributes ??
        e.childWorkflowExecutionTimedOutEventAttributes ??
        e.childWorkflowExecutionTerminatedEventAttributes;
      if (ended) running -= 1;
    }
    found.push({ events: events.length, targets: events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).length, mostAtOnce });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return found;
}
