import { createAuditActivities, type AuditActivityDeps } from './audit';
import { createConfigSyncActivities, type ConfigSyncActivityDeps } from './config-sync';
import { createConversationActivities, type ConversationActivities, type ConversationActivityDeps } from './conversations';
import { createDeploymentActivities, type DeploymentActivityDeps } from './deployment-steps';
import { createRunBookkeepingActivities } from './run-bookkeeping';
import { createRunQueueActivities } from './run-queue';
import { createHealthCheckActivities } from './health-checks';
import { createPipelineActivities, type PipelineActivityDeps } from './pipelines';
import { createNotificationActivities, type NotificationActivityDeps } from './notifications';
import { createScheduleTickActivities, type ScheduleTickActivityDeps } from './schedule-ticks';
import { createServerActivities, type ServerActivityDeps } from './servers';
import { createTransferActivities, type TransferActivityDeps } from './transfers';
import { createWorkflowOutcomeActivities } from './workflow-outcome';

export type ActivityDeps = ServerActivityDeps & DeploymentActivityDeps & ConversationActivityDeps & TransferActivityDeps & ScheduleTickActivityDeps & NotificationActivityDeps & AuditActivityDeps & PipelineActivityDeps & ConfigSyncActivityDeps;

/** The activities of one file of this folder, under the name the worker registers each with. */
export interface ActivitySource {
  file: string;
  activities: Record<string, (...args: never[]) => Promise<unknown>>;
}

/** Two files register an activity under the same name: the worker would run only one of them. */
export class DuplicateActivityError extends Error {
  override name = 'DuplicateActivityError';
}

/**
 * One table of every source's activities. A name registered twice is refused: with a plain object
 * spread the later file's activity silently replaces the earlier one, and workflows call the wrong code.
 */
export function mergeActivities<T extends ActivitySource[]>(sources: T): UnionOfActivities<T> {
  const owners = new Map<string, string>();
  const merged: Record<string, unknown> = {};
  for (const { file, activities } of sources) {
    for (const [name, activity] of Object.entries(activities)) {
      const owner = owners.get(name);
      if (owner) throw new DuplicateActivityError(`Activity "${name}" is registered by both ${owner} and ${file}: give one of them another name`);
      owners.set(name, file);
      merged[name] = activity;
    }
  }
  return merged as UnionOfActivities<T>;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type UnionOfActivities<T extends ActivitySource[]> = UnionToIntersection<T[number]['activities']>;

/** Every activity the worker registers, with its dependencies injected. */
export function activitySources(deps: ActivityDeps) {
  const conversations = createConversationActivities(deps);
  return [
    { file: 'activities/servers.ts', activities: createServerActivities(deps) },
    { file: 'activities/run-queue.ts', activities: createRunQueueActivities(deps) },
    { file: 'activities/run-bookkeeping.ts', activities: createRunBookkeepingActivities(deps) },
    { file: 'activities/deployment-steps.ts', activities: createDeploymentActivities(deps) },
    { file: 'activities/health-checks.ts', activities: createHealthCheckActivities(deps) },
    { file: 'activities/conversations.ts', activities: conversations },
    { file: 'activities/transfers.ts', activities: createTransferActivities(deps) },
    { file: 'activities/schedule-ticks.ts', activities: createScheduleTickActivities(deps) },
    { file: 'activities/notifications.ts', activities: createNotificationActivities(deps) },
    { file: 'activities/pipelines.ts', activities: createPipelineActivities(deps) },
    { file: 'activities/audit.ts', activities: createAuditActivities(deps) },
    { file: 'activities/config-sync.ts', activities: createConfigSyncActivities(deps) },
    { file: 'activities/workflow-outcome.ts', activities: createWorkflowOutcomeActivities() },
    { file: 'activities/index.ts (names of before the rename)', activities: legacyNames(conversations) },
  ];
}

/**
 * The conversation activities under the names they had before every activity name was made unique
 * (`failStep` then meant the conversation's: it silently replaced the deployment's). A conversation
 * started before the rename replays its history with these names, and one whose activity was scheduled
 * but not yet run still runs it under its old name.
 */
function legacyNames(conversations: ConversationActivities) {
  return {
    setStatus: conversations.setConversationStatus,
    failStep: conversations.failConversationStep,
    finish: conversations.finishConversation,
  };
}

export type LegacyConversationActivities = ReturnType<typeof legacyNames>;
