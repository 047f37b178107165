import { createConversationActivities, type ConversationActivityDeps } from './conversations';
import { createDeploymentActivities, type DeploymentActivityDeps } from './deployments';
import { createServerActivities, type ServerActivityDeps } from './servers';
import { createTransferActivities, type TransferActivityDeps } from './transfers';

export type ActivityDeps = ServerActivityDeps & DeploymentActivityDeps & ConversationActivityDeps & TransferActivityDeps;

/** Every activity the worker registers, with its dependencies injected. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createServerActivities(deps),
    ...createDeploymentActivities(deps),
    ...createConversationActivities(deps),
    ...createTransferActivities(deps),
  };
}
