import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';

/* What Bosun asks of any one of its workflows by id. */

/** Is a workflow still open? False when it ended (or never existed). */
export async function isOpen(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** Whether Temporal has a workflow of this id at all, open or closed (within its retention). */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** Requests a workflow's cancellation; false when it is no longer running (a closed workflow takes none) or never was. */
export async function cancelIfRunning(client: Client, workflowId: string): Promise<boolean> {
  try {
    const handle = client.workflow.getHandle(workflowId);
    if ((await handle.describe()).status.name !== 'RUNNING') return false;
    await handle.cancel();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * An update of a workflow, answered by it: its result; 'refused' (its validator: it waits for no
 * such decision now), 'gone' (the workflow no longer runs), or 'unanswered' (no worker took it within
 * timeoutMs: Temporal may still deliver it to the next worker that runs). The deadline outlasts a
 * worker's death: its workflow's task goes to another worker within seconds.
 */
export async function answeredUpdate<T>(client: Client, workflowId: string, name: string, arg: unknown, timeoutMs: number): Promise<T | 'refused' | 'gone' | 'unanswered'> {
  try {
    // An update waits for a worker to take it: without a deadline, the request would hang while every worker is down.
    return await client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflow.getHandle(workflowId).executeUpdate<T, [unknown]>(name, { args: [arg] }));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'gone';
    if (error instanceof WorkflowUpdateFailedError) return 'refused';
    if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'unanswered';
    throw error;
  }
}
