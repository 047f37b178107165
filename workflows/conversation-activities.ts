import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { isPatched, PATCHES } from './patches';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';
import type { ConversationActivities } from '../activities/conversations';
import type { LegacyConversationActivities } from '../activities/index';
import type { WorkflowOutcomeActivities } from '../activities/workflow-outcome';
import type { TransferActivities } from '../activities/transfers';
import { DEFAULT_STEP_LIMIT_SECONDS } from '../src/domain/contracts/runs';
import { NON_RETRYABLE_FAILURES } from '../src/domain/contracts/failure-types';

/* The activities a conversation's workflow calls, each kind with its options: bookkeeping, planning, a step's command, a transfer. */

const bookkeepingOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
} as const;
export const bookkeeping = proxyLocalActivities<ConversationActivities & WorkflowOutcomeActivities>(bookkeepingOptions);
// A conversation started before every activity had a unique name replays (and goes on) with the old ones.
const legacyBookkeeping = proxyLocalActivities<LegacyConversationActivities>(bookkeepingOptions);

// Planning may call an LLM (several attempts, each with its own retries): a regular, heartbeating activity, retried on transport errors.
export const planning = proxyActivities<ConversationActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

// Each step: one heartbeating SSH activity; transport failures retry with backoff for about 45 s.
export const execution = proxyActivities<ConversationActivities>({
  startToCloseTimeout: (DEFAULT_STEP_LIMIT_SECONDS + 600) * 1000,
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 8, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

// A transfer moves data for as long as it takes (hours for a large tree), heartbeating; a retry resumes a copy.
export const transfers = proxyActivities<TransferActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

/** The conversation's status, a step's failure and its end, under the names its history records them with. Decided once, at the start: a history recorded before the rename keeps the names it was recorded with. */
export function conversationStore() {
  return isPatched(PATCHES.uniqueActivityNames)
    ? { setStatus: bookkeeping.setConversationStatus, failStep: bookkeeping.failConversationStep, finish: bookkeeping.finishConversation }
    : { setStatus: legacyBookkeeping.setStatus, failStep: legacyBookkeeping.failStep, finish: legacyBookkeeping.finish };
}

export type ConversationStore = ReturnType<typeof conversationStore>;
