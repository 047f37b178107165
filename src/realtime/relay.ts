import type { ChangeStream, ChangeStreamDocument, Collection, Document, ResumeToken } from 'mongodb';
import mongoose from 'mongoose';
import { ConversationModel } from '../conversations/model';
import { DeploymentRunModel, type DeploymentRun } from '../deployments/model';
import { toRunView } from '../deployments/views';
import type { Logger } from '../logger';
import { ApiTokenModel } from '../tokens/model';
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
  const view = toRunView(doc, false);
  const chunk = updated.includes('last_chunk') ? doc.last_chunk : null;
  return {
    run_id: view.id,
    deployment_id: view.deployment_id,
    seq: doc.seq,
    status: view.status,
    started_at: view.started_at,
    completed_at: view.completed_at,
    steps: view.steps.map(({ name, status, exit_code, attempts, started_at, completed_at }) => ({
      name, status, exit_code, attempts, started_at, completed_at,
    })),
    output:
      chunk && typeof chunk.step === 'number'
        ? { step: chunk.step, step_name: doc.steps[chunk.step]?.name ?? '', offset: chunk.offset ?? 0, data: chunk.data ?? '' }
        : null,
  };
}

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
  // Events carry each change's appended chunk, never whole outputs: keep only the names of the
  // fields a change set, and leave outputs out of the post-image.
  return watchWithResume<DeploymentRun>(
    DeploymentRunModel.collection,
    [CHANGED_KEYS, { $project: { updateDescription: 0, 'fullDocument.steps.output': 0 } }],
    (change) => {
      observe(change);
      const event = toRunEvent(change);
      if (event) emit(event);
    },
    log,
    'run',
  );
}
