import type { Planner } from '../src/domain/planner/types';
import type { StepExecutionDeps } from './step-execution';
import { createConversationPlanActivities } from './conversation-plans';
import { createConversationStateActivities } from './conversation-state';
import { createConversationStepActivities } from './conversation-steps';

/*
 * A conversation's activities, registered as one source under names recorded in histories: its
 * instructions planned (conversation-plans.ts), its status, decisions and end (conversation-state.ts),
 * its steps run, failed and closed (conversation-steps.ts).
 */

export interface ConversationActivityDeps extends StepExecutionDeps {
  planner: Planner;
}

export function createConversationActivities(deps: ConversationActivityDeps) {
  return {
    ...createConversationPlanActivities(deps),
    ...createConversationStateActivities(),
    ...createConversationStepActivities(deps),
  };
}

export type ConversationActivities = ReturnType<typeof createConversationActivities>;
