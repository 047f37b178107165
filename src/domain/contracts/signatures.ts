import type { ConfigSyncInput, ConfigSyncOutcome } from './config-sync';
import type { ConversationInput, ConversationResult } from './conversations';
import type { NotificationDeliveryInput, NotificationDispatchInput } from './notifications';
import type { FleetResult, FleetRunInput, QueuedRun, RollbackRunInput, RunQueueInput, RunResult, TargetRunInput } from './runs';
import type { TargetGroupInput, TargetOutcome } from './target-groups';
import type { PipelineRunInput } from './pipelines';
import type { ScheduledRunInput, ScheduledRunResult } from './schedules';
import type { ImportVerificationInput, ImportVerificationResult, ServerHealthInput, ServerHealthSweepInput, VerifyServerInput } from './servers';

/**
 * The workflows as their clients see them: started by name with these signatures, so code that
 * starts them (src/) never imports the workflows themselves. Each workflow is checked against its
 * signature in workflows/index.ts.
 */
export interface WorkflowSignatures {
  serverVerificationWorkflow: (input: VerifyServerInput) => Promise<void>;
  serverHealthWorkflow: (input: ServerHealthInput) => Promise<void>;
  serverHealthSweepWorkflow: (input: ServerHealthSweepInput) => Promise<void>;
  inventoryVerificationWorkflow: (input: ImportVerificationInput) => Promise<ImportVerificationResult>;
  serverRunQueueWorkflow: (input: RunQueueInput) => Promise<void>;
  deploymentRunWorkflow: (run: QueuedRun) => Promise<RunResult>;
  deploymentFleetWorkflow: (run: FleetRunInput) => Promise<FleetResult>;
  deploymentTargetWorkflow: (target: TargetRunInput) => Promise<RunResult>;
  fleetTargetGroupWorkflow: (group: TargetGroupInput) => Promise<TargetOutcome[]>;
  deploymentRollbackWorkflow: (input: RollbackRunInput) => Promise<string>;
  pipelineRunWorkflow: (input: PipelineRunInput) => Promise<{ status: 'success'; stages: number }>;
  conversationWorkflow: (input: ConversationInput) => Promise<ConversationResult>;
  scheduledRunWorkflow: (input: ScheduledRunInput) => Promise<ScheduledRunResult>;
  notificationDispatchWorkflow: (input: NotificationDispatchInput) => Promise<void>;
  notificationDeliveryWorkflow: (input: NotificationDeliveryInput) => Promise<void>;
  auditChainWorkflow: () => Promise<void>;
  auditCheckpointWorkflow: () => Promise<void>;
  configSyncWorkflow: (input: ConfigSyncInput) => Promise<ConfigSyncOutcome>;
}
