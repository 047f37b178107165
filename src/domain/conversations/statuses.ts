/* The statuses of conversations and their steps. */

export const CONVERSATION_STATUSES = ['running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export const FINAL_CONVERSATION_STATUSES: readonly ConversationStatus[] = ['completed', 'failed', 'cancelled'];
export const CONVERSATION_STEP_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
