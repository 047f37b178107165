import { ConversationModel, type Conversation, type ConversationStatus } from '../src/domain/conversations/model';
import * as conversations from '../src/domain/conversations/store';
import { type StepDecision } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { outcomeLine, type FinishConversation } from './conversation-outcome';

/* A conversation as its workflow reads and records it: the conversation itself, its status, a person's decision on a step, its end. */

export async function loadConversation(conversationId: string): Promise<Conversation> {
  const conversation = await ConversationModel.findById(conversationId).lean<Conversation>();
  if (!conversation) throw failure('ConversationNotFound', `Conversation ${conversationId} does not exist`);
  return conversation;
}

export function createConversationStateActivities() {
  return {
    async setConversationStatus({ conversationId, status }: { conversationId: string; status: ConversationStatus }): Promise<void> {
      await conversations.setStatus(conversationId, status);
    },

    /** A person's decision on a step; a rejected step fails as not run. */
    async recordDecision({ conversationId, index, approved, by }: StepDecision & { conversationId: string; index: number }): Promise<void> {
      await conversations.recordDecision(conversationId, index, { approved, by });
    },

    /**
     * The conversation's final status, with its one-line `error` when it failed or was cancelled:
     * which step (`failedStep`, or the instruction that could not be planned) and why. Returns that line.
     */
    async finishConversation({ conversationId, status, error, failedStep }: FinishConversation): Promise<string | null> {
      const line = error !== undefined ? error : status === 'completed' ? null : await outcomeLine(await loadConversation(conversationId), status, failedStep);
      await conversations.finish(conversationId, status, line);
      return line;
    },
  };
}
