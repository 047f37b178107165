import type { ChangeStream, ChangeStreamDocument, Collection, Document, ResumeToken } from 'mongodb';
import mongoose from 'mongoose';
import { ConversationModel } from '../../domain/conversations/model';
import { DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import { iso } from '../http/timestamps';
import type { Logger } from '../../logger';
import { ApiTokenModel } from '../../domain/tokens/model';
import type { DeploymentRunUpdatedEvent } from './events';

/** Change streams carry each update's exact post-image only where the collection keeps them (MongoDB 6.0+). */
export async function enableChangeStreamImages(): Promise<void> {
  const db = mongoose.connection.db!;
  for (const name of [DeploymentRunModel.collection.collectionName, ConversationModel.collection.collectionName, ApiTokenModel.collection.collectionName]) {
    await db.createCollection(name).catch((error: { codeName?: string }) => {
      if (error.codeName !== 'NamespaceExists') throw error;
    });
    await db.command({ collMod: name, changeStreamPreAndPostImages: { enabled: true } });
  }
}

/** A change as the relay receives it: the post-image without outputs, and the names of the fields it set. */
type RelayedChange = ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] };

/** The event of one change; null for bookkeeping writes that do not advance the run's sequence. */
export function toRunEvent(change: RelayedChange): DeploymentRunUpdatedEvent | null {
  if (change.operationType !== 'insert' && change.operationType !== 'update' && change.operationType !== 'replace') return null;
  const doc = change.fullDocument;
  if (!doc) return null;
  const updated = change.operationType === 'update' ? (change.changedKeys ?? []) : ['seq', 'last_chunk'];
  if (!updated.includes('seq')) return null;
  const chunk = updated.includes('last_chunk') ? doc.last_chunk : null;
  return {
    run_id: doc._id.toString(),
    deployment_id: doc.deployment_id.toString(),
    seq: doc.seq,
    status: doc.status,
    started_at: iso(doc.started_at),
    completed_at: iso(doc.completed_at),
    error: doc.error ?? null,
    steps: doc.steps.map((s) => ({
      name: s.name,
      status: s.status,
      exit_code: s.exit_code ?? null,
      attempts: s.attempts ?? 0,
      started_at: iso(s.started_at),
      completed_at: iso(s.completed_at),
    })),
    output:
      chunk && typeof chunk.step === 'number'
        ? { step: chunk.step, step_name: doc.steps[chunk.step]?.name ?? '', offset: chunk.offset ?? 0, data: chunk.data ?? '' }
        : null,
  };
}

const RUN_EVENT_FIELDS = Object.fromEntries(
  [
    'operationType', 'documentKey', 'clusterTime', 'wallTime', 'changedKeys',
    ...['_id', 'deployment_id', 'seq', 'status', 'started_at', 'completed_at', 'error', 'last_chunk'].map((f) => `fullDocument.${f}`),
    ...['name', 'status', 'exit_code', 'attempts', 'started_at', 'completed_at'].map((f) => `fullDocument.steps.${f}`),
  ].map((field) => [field, 1]),
);

/** The names of the fields an update set, as `changedKeys`: what tells one change's events from another's. */
export const CHANGED_KEYS = {
  $addFields: { changedKeys: { $map: { input: { $objectToArray: { $ifNull: ['$updateDescription.updatedFields', {}] } }, in: '$$this.k' } } },
};

/**
 * Watches a collection with post-images and hands every change to `onChange`; a broken stream
 * reopens after a second where it stopped (from now, if the oplog no longer reaches back that far:
 * clients see the gap in `seq` and re-read).
 */
export function watchWithResume<T extends Document>(
  collection: Collection,
  pipeline: Document[],
  onChange: (change: ChangeStreamDocument<T> & { changedKeys?: string[] }) => void,
  log: Logger,
  what: string,
): { close(): Promise<void> } {
  let stream: ChangeStream<T> | undefined;
  let resumeAfter: ResumeToken | undefined;
  let closed = false;
  const open = () => {
    if (closed) return;
    stream = collection.watch<T>(pipeline, { fullDocument: 'required', ...(resumeAfter ? { resumeAfter } : {}) });
    stream.on('change', (change) => {
      resumeAfter = change._id;
      onChange(change);
    });
    stream.on('error', (err: Error & { codeName?: string }) => {
      if (closed) return;
      if (err.codeName === 'ChangeStreamHistoryLost' || err.codeName === 'InvalidResumeToken') resumeAfter = undefined;
      log.warn({ err: err.message }, `${what} change stream failed; reopening`);
      void stream?.close().catch(() => undefined);
      setTimeout(open, 1000).unref();
    });
  };
  open();
  return {
    async close() {
      closed = true;
      await stream?.close();
    },
  };
}

/**
 * Watches run documents and hands every persisted change to `emit`: persist first, then relay. Each
 * API process runs its own, so clients on any process see every run. `observe` sees every change as it came (metrics).
 */
export function relayRunChanges(
  emit: (event: DeploymentRunUpdatedEvent) => void,
  log: Logger,
  observe: (change: ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] }) => void = () => undefined,
): { close(): Promise<void> } {
  return watchWithResume<DeploymentRun>(
    DeploymentRunModel.collection,
    [
      CHANGED_KEYS,
      // Only changes that advance the run's sequence (every change of a status or of output does);
      // bookkeeping writes (a command's process group id) are not sent to this process at all.
      { $match: { $or: [{ operationType: { $ne: 'update' } }, { changedKeys: 'seq' }] } },
      // Of the post-image, only what an event shows: never outputs (events carry each change's
      // appended chunk), nor commands, nor the execution bookkeeping of every step.
      { $project: RUN_EVENT_FIELDS },
    ],
    (change) => {
      observe(change);
      const event = toRunEvent(change);
      if (event) emit(event);
    },
    log,
    'run',
  );
}
