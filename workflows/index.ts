export { serverVerificationWorkflow } from './server-verification';
export { serverHealthWorkflow } from './server-health';
