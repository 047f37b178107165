import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** One execution of a workflow: its events, the targets its child workflows run, and the most targets it had running at once. */
export interface Execution {
  events: number;
  targets: number;
  mostAtOnce: number;
}

type Initiated = temporal.api.history.v1.IStartChildWorkflowExecutionInitiatedEventAttributes;

/** How many targets a child runs: a target group's, those of its input; a target's own workflow, one. */
function targetsOf(child: Initiated): number {
  if (child.workflowType?.name !== 'fleetTargetGroupWorkflow') return 1;
  const data = child.input?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { targets: unknown[] }).targets.length : 0;
}

/** Each execution of a workflow, from its first through every continue-as-new. */
export async function executionsOf(client: Client, workflowId: string): Promise<Execution[]> {
  const found: Execution[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.firstRunId ?? undefined;
  while (runId) {
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const children = new Map<string, number>();
    let targets = 0;
    let running = 0;
    let mostAtOnce = 0;
    for (const e of events) {
      const initiated = e.startChildWorkflowExecutionInitiatedEventAttributes;
      if (initiated) {
        const count = targetsOf(initiated);
        children.set(String(e.eventId), count);
        targets += count;
        mostAtOnce = Math.max(mostAtOnce, (running += count));
      }
      const ended =
        e.childWorkflowExecutionCompletedEventAttributes ??
        e.childWorkflowExecutionFailedEventAttributes ??
        e.childWorkflowExecutionCanceledEventAttributes ??
        e.childWorkflowExecutionTimedOutEventAttributes ??
        e.childWorkflowExecutionTerminatedEventAttributes;
      if (ended) running -= children.get(String(ended.initiatedEventId)) ?? 1;
    }
    found.push({ events: events.length, targets, mostAtOnce });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return found;
}
