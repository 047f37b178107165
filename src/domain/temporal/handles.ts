import { WorkflowNotFoundError, type Client } from '@temporalio/client';

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
