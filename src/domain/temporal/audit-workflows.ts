import type { Client } from '@temporalio/client';
import type { WorkflowSignatures } from '../contracts/signatures';
import { auditChainWorkflowId, auditCheckpointWorkflowId } from '../contracts/workflow-ids';

/**
 * The audit trail's chainer and checkpoint clock, started by every worker at its start: the one
 * already running is kept (USE_EXISTING), so each exists once however many workers start.
 */
export async function startAuditWorkflows(client: Client, taskQueue: string): Promise<void> {
  await Promise.all([
    client.workflow.start<WorkflowSignatures['auditChainWorkflow']>('auditChainWorkflow', {
      taskQueue,
      workflowId: auditChainWorkflowId(taskQueue),
      args: [],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: 'Audit trail: chains finished entries, each organization in order',
    }),
    client.workflow.start<WorkflowSignatures['auditCheckpointWorkflow']>('auditCheckpointWorkflow', {
      taskQueue,
      workflowId: auditCheckpointWorkflowId(taskQueue),
      args: [],
      workflowIdConflictPolicy: 'USE_EXISTING',
      staticSummary: 'Audit trail: checkpoints of each organization’s head, and retention',
    }),
  ]);
}
