import { FINAL_CONVERSATION_STATUSES } from '../../src/domain/conversations/statuses';
import { FINAL_RUN_STATUSES } from '../../src/domain/deployments/statuses';

/* What every test's requests and waits share, whichever Bosun they talk to. */

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A run (or conversation) that reached a final status: what a test waits for. */
export const runEnded = <T extends { status: string }>(run: T) => (FINAL_RUN_STATUSES as readonly string[]).includes(run.status);
export const conversationEnded = <T extends { status: string }>(conversation: T) => (FINAL_CONVERSATION_STATUSES as readonly string[]).includes(conversation.status);
