import type { WorkflowSignatures } from './contracts';
import { conversationWorkflow } from './conversation';
import { deploymentRunWorkflow } from './deployment-run';
import { serverHealthWorkflow } from './server-health';
import { serverRunQueueWorkflow } from './server-run-queue';
import { serverVerificationWorkflow } from './server-verification';

export { serverVerificationWorkflow, serverHealthWorkflow, serverRunQueueWorkflow, deploymentRunWorkflow, conversationWorkflow };

// The signatures src/ starts them with (it never imports this folder's code): checked here.
void ({ serverVerificationWorkflow, serverHealthWorkflow, serverRunQueueWorkflow, deploymentRunWorkflow, conversationWorkflow } satisfies WorkflowSignatures);
