import type { Client } from '@temporalio/client';
import type { WorkflowSignatures } from '../contracts/signatures';
import { auditChainWorkflowId, auditCheckpointWorkflowId, notificationDispatchWorkflowId } from '../contracts/workflow-ids';

type Singleton = { type: 'notificationDispatchWorkflow' | 'auditChainWorkflow' | 'auditCheckpointWorkflow'; workflowId: string; args: [] | [{}]; staticSummary: string };

/** The workflows a Bosun runs once (its task queue names them: Bosuns sharing a namespace each have theirs). */
const singletons = (taskQueue: string): Singleton[] => [
  { type: 'notificationDispatchWorkflow', workflowId: notificationDispatchWorkflowId(taskQueue), args: [{}], staticSummary: 'Notification dispatcher: the outbox of events to channels’ delivery workflows' },
  { type: 'auditChainWorkflow', workflowId: auditChainWorkflowId(taskQueue), args: [], staticSummary: 'Audit trail: chains finished entries, each organization in order' },
  { type: 'auditCheckpointWorkflow', workflowId: auditCheckpointWorkflowId(taskQueue), args: [], staticSummary: 'Audit trail: checkpoints of each organization’s head, and retention' },
];

/**
 * Starts each of a Bosun's one-of-a-kind workflows — the notification dispatcher, the audit trail's
 * chainer and its checkpoint clock — unless it runs already (USE_EXISTING keeps the one running, so
 * each exists once however many workers ask). Every worker asks at its start and every minute after:
 * one terminated by hand, or not started while Temporal was away, comes back.
 */
export async function ensureSingletonWorkflows(client: Client, taskQueue: string): Promise<void> {
  await Promise.all(
    singletons(taskQueue).map(({ type, workflowId, args, staticSummary }) =>
      client.workflow.start<WorkflowSignatures[typeof type]>(type, { taskQueue, workflowId, args: args as never, workflowIdConflictPolicy: 'USE_EXISTING', staticSummary }),
    ),
  );
}
