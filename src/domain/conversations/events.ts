import type { ChangeStreamDocument } from 'mongodb';
import { changeShaped, omitFields, type ChangeListener } from '../change-streams';
import type { ConversationStepState, ConversationStepUpdatedEvent, ConversationUpdatedEvent } from '../events';
import { iso } from '../timestamps';
import type { Conversation, ConversationStep } from './model';

/*
 * How a change of a conversation (made by the transitions in store.ts) becomes events: what the
 * relay asks the change stream for, the ConversationStepUpdated events of the steps it touched, and
 * ConversationUpdated when its status changed.
 */

/** A step as GET /api/v1/conversations/{id} and its events show it. */
export const toStepView = (s: ConversationStep): ConversationStepState => ({
  id: s._id.toString(),
  status: s.status,
  execution_success: s.execution_success ?? null,
  execution_log: s.output ?? '',
  created_at: s.created_at.toISOString(),
  title: s.title,
  command: s.command,
  target: s.target,
  server_id: s.server_id?.toString() ?? null,
  transfer: s.transfer
    ? { kind: s.transfer.kind, source_server_id: s.source_server_id?.toString() ?? null, from: s.transfer.from ?? null, to: s.transfer.to ?? null, source_command: s.transfer.source_command ?? null, target_command: s.transfer.target_command ?? null }
    : null,
  risk: s.risk,
  message_id: s.message_id.toString(),
  exit_code: s.exit_code ?? null,
  approval: s.approval ? { decision: s.approval.decision ?? null, decided_by: s.approval.decided_by ?? null, decided_at: iso(s.approval.decided_at) } : null,
  started_at: iso(s.started_at),
  completed_at: iso(s.completed_at),
});

type RelayedStep = ConversationStep & { changed?: boolean };
type RelayedChange = ChangeStreamDocument<Conversation> & { changedKeys?: string[] };

/**
 * What the relay asks the API's change stream for, and is given of each change
 * (src/api/realtime/conversation-relay.ts): inserts, updates and replacements, the post-image
 * without the messages, and of the steps the execution log only of those this change touched (marked
 * `changed`): events carry the step as GET shows it, but a change must not ship every other step's
 * log too.
 */
export const conversationChanges = (collection: string): Pick<ChangeListener, 'collections' | 'match' | 'shape'> => ({
  collections: [collection],
  match: { operationType: { $in: ['insert', 'update', 'replace'] } },
  shape: changeShaped({ $mergeObjects: [omitFields('$fullDocument', ['messages']), { steps: MARKED_STEPS }] }),
});

/** The post-image's steps, each touched by the change marked `changed`, the others without their output. */
const MARKED_STEPS = {
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

