import type { ChangeStreamDocument } from 'mongodb';
import { conversationChanges, toConversationEvents } from '../../domain/conversations/events';
import { ConversationModel, type Conversation } from '../../domain/conversations/model';
import type { ConversationStepUpdatedEvent, ConversationUpdatedEvent } from '../../domain/events';
import type { ChangeListener } from '../../domain/change-streams';

type RelayedChange = ChangeStreamDocument<Conversation> & { changedKeys?: string[] };

/**
 * Relays each persisted change of a conversation (persist first, then relay), heard on the API's one
 * change stream (src/roles/api.ts); `observe` sees every change as it came (metrics).
 */
export function conversationRelay(
  emit: { step(event: ConversationStepUpdatedEvent): void; conversation(event: ConversationUpdatedEvent): void },
  observe: (change: RelayedChange) => void = () => undefined,
): ChangeListener {
  return {
    ...conversationChanges(ConversationModel.collection.collectionName),
    onChange: (change) => {
      const conversation = change as RelayedChange;
      observe(conversation);
      const events = toConversationEvents(conversation);
      for (const event of events.steps) emit.step(event);
      if (events.conversation) emit.conversation(events.conversation);
    },
  };
}
