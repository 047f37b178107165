import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { WorkflowSignatures } from '../contracts/signatures';
import { notificationDispatchWorkflowId } from '../contracts/workflow-ids';

/**
 * Starts this Bosun's notification dispatcher unless it runs already (every worker asks at its
 * start; one runs). Retried by the caller's sweep when Temporal cannot be reached.
 */
export async function ensureNotificationDispatcher(client: Client, taskQueue: string): Promise<'started' | 'running'> {
  try {
    await client.workflow.start<WorkflowSignatures['notificationDispatchWorkflow']>('notificationDispatchWorkflow', {
      workflowId: notificationDispatchWorkflowId(taskQueue),
      taskQueue,
      args: [{}],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: 'Notification dispatcher: the outbox of events to channels’ delivery workflows',
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'running';
    throw error;
  }
}
