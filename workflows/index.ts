import type { WorkflowSignatures } from '../src/domain/contracts/signatures';
import { auditChainWorkflow, auditCheckpointWorkflow } from './audit';
import { configSyncWorkflow } from './config-sync';
import { conversationWorkflow } from './conversation';
import { deploymentFleetWorkflow } from './deployment-fleet';
import { deploymentTargetWorkflow } from './deployment-target';
import { fleetTargetGroupWorkflow } from './fleet-groups';
import { deploymentRunWorkflow } from './deployment-run';
import { deploymentRollbackWorkflow } from './rollback';
import { notificationDeliveryWorkflow } from './notification-delivery';
import { notificationDispatchWorkflow } from './notification-dispatch';
import { scheduledRunWorkflow } from './scheduled-run';
import { serverHealthWorkflow } from './server-health';
import { serverHealthSweepWorkflow } from './server-health-sweep';
import { serverRunQueueWorkflow } from './server-run-queue';
import { serverVerificationWorkflow } from './server-verification';
import { inventoryVerificationWorkflow } from './inventory-verification';
import { pipelineRunWorkflow } from './pipeline-run';

export {
  serverVerificationWorkflow,
  serverHealthWorkflow,
  serverHealthSweepWorkflow,
  inventoryVerificationWorkflow,
  serverRunQueueWorkflow,
  deploymentRunWorkflow,
  deploymentFleetWorkflow,
  deploymentTargetWorkflow,
  fleetTargetGroupWorkflow,
  deploymentRollbackWorkflow,
  pipelineRunWorkflow,
  conversationWorkflow,
  scheduledRunWorkflow,
  notificationDispatchWorkflow,
  notificationDeliveryWorkflow,
  auditChainWorkflow,
  auditCheckpointWorkflow,
  configSyncWorkflow,
};

// The signatures src/ starts them with (it never imports this folder's code): checked here.
void ({
  serverVerificationWorkflow,
  serverHealthWorkflow,
  serverHealthSweepWorkflow,
  inventoryVerificationWorkflow,
  serverRunQueueWorkflow,
  deploymentRunWorkflow,
  deploymentFleetWorkflow,
  deploymentTargetWorkflow,
  fleetTargetGroupWorkflow,
  deploymentRollbackWorkflow,
  pipelineRunWorkflow,
  conversationWorkflow,
  scheduledRunWorkflow,
  notificationDispatchWorkflow,
  notificationDeliveryWorkflow,
  auditChainWorkflow,
  auditCheckpointWorkflow,
  configSyncWorkflow,
} satisfies WorkflowSignatures);
