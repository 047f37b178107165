import type { ChangeStreamDocument } from 'mongodb';
import { ConversationModel, type Conversation, type ConversationStep } from '../../domain/conversations/model';
import { toStepView } from '../conversations/views';
import type { Logger } from '../../logger';
import type { ConversationStepUpdatedEvent, ConversationUpdatedEvent } from './events';
import { CHANGED_KEYS, watchWithResume } from './relay';
import { iso } from '../http/timestamps';

type RelayedStep = ConversationStep & { changed?: boolean };
type RelayedChange = ChangeStreamDocument<Conversation> & { changedKeys?: string[] };

/**
 * Keeps the execution log only of steps this change touched (marked `changed`): events carry the
 * step as GET shows it, but a change must not ship every other step's log too.
 */
const MARK_CHANGED_STEPS = {
  $addFields: {
    'fullDocument.steps': {
      $map: {
        input: { $range: [0, { $size: { $ifNull: ['$fullDocument.steps', []] } }] },
        as: 'i',
        in: {
          $let: {
            vars: { step: { $arrayElemAt: ['$fullDocument.steps', '$$i'] }, prefix: { $concat: ['steps.', { $toString: '$$i' }] } },
            in: {
              $cond: [
                {
                  $or: [
                    { $ne: ['$operationType', 'update'] },
                    { $in: ['steps', '$changedKeys'] },
                    { $anyElementTrue: [{ $map: { input: '$changedKeys', as: 'k', in: { $or: [{ $eq: ['$$k', '$$prefix'] }, { $eq: [{ $indexOfBytes: ['$$k', { $concat: ['$$prefix', '.'] }] }, 0] }] } } }] },
                  ],
                },
                { $mergeObjects: ['$$step', { changed: true }] },
                { $unsetField: { field: 'output', input: '$$step' } },
              ],
            },
          },
        },
      },
    },
  },
};

/** The events of one change: one per step it touched, and one for the conversation when its status changed. */
export function toConversationEvents(change: RelayedChange): { steps: ConversationStepUpdatedEvent[]; conversation: ConversationUpdatedEvent | null } {
  const none = { steps: [], conversation: null };
  if (change.operationType !== 'insert' && change.operationType !== 'update' && change.operationType !== 'replace') return none;
  const doc = change.fullDocument;
  if (!doc) return none;
  const keys = change.operationType === 'update' ? (change.changedKeys ?? []) : ['seq', 'status'];
  if (!keys.includes('seq')) return none;
  const id = doc._id.toString();
  const chunk = keys.includes('last_chunk') && doc.last_chunk && typeof doc.last_chunk.step === 'number' ? doc.last_chunk : null;
  const steps = (doc.steps as RelayedStep[])
    .map((step, index) => ({ step, index }))
    .filter(({ step }) => step.changed && change.operationType === 'update')
    .map(({ step, index }) => ({
      conversation_id: id,
      seq: doc.seq,
      conversation_status: doc.status,
      step: toStepView(step),
      chunk: chunk?.step === index ? { offset: chunk.offset ?? 0, data: chunk.data ?? '' } : null,
    }));
  const conversation = keys.includes('status') ? { conversation_id: id, seq: doc.seq, status: doc.status, completed_at: iso(doc.completed_at), error: doc.error ?? null } : null;
  return { steps, conversation };
}

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
