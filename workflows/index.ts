export { serverVerificationWorkflow } from './server-verification';
export { serverHealthWorkflow } from './server-health';
export { serverRunQueueWorkflow } from './server-run-queue';
export { deploymentRunWorkflow } from './deployment-run';
export { conversationWorkflow } from './conversation';
