import type { ChangeStreamDocument } from 'mongodb';
import { MARK_CHANGED_STEPS, toConversationEvents } from '../../domain/conversations/events';
import { ConversationModel, type Conversation } from '../../domain/conversations/model';
import type { Logger } from '../../logger';
import type { ConversationStepUpdatedEvent, ConversationUpdatedEvent } from '../../domain/events';
import { watchWithResume } from '../../domain/change-streams';
import { CHANGED_KEYS } from './relay';

type RelayedChange = ChangeStreamDocument<Conversation> & { changedKeys?: string[] };

/** Watches conversations and relays each persisted change (persist first, then relay); `observe` sees every change as it came (metrics). */
export function relayConversationChanges(
  emit: { step(event: ConversationStepUpdatedEvent): void; conversation(event: ConversationUpdatedEvent): void },
  log: Logger,
  observe: (change: RelayedChange) => void = () => undefined,
): { close(): Promise<void> } {
  return watchWithResume<Conversation>(
    ConversationModel.collection,
    [
      { $match: { operationType: { $in: ['insert', 'update', 'replace'] } } },
      CHANGED_KEYS,
      MARK_CHANGED_STEPS,
      { $project: { updateDescription: 0, 'fullDocument.messages': 0 } },
    ],
    (change) => {
      observe(change);
      const events = toConversationEvents(change);
      for (const event of events.steps) emit.step(event);
      if (events.conversation) emit.conversation(events.conversation);
    },
    log,
    'conversation',
  );
}
