import type { ChangeStream, ChangeStreamDocument, Collection, Document, ResumeToken } from 'mongodb';
import mongoose from 'mongoose';
import { ConversationModel } from '../../domain/conversations/model';
import { DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import type { Logger } from '../../logger';
import { ApiTokenModel } from '../../domain/tokens/model';
import type { DeploymentRunUpdatedEvent } from '../../domain/events';
import { RUN_EVENT_PIPELINE, toRunEvent } from '../../domain/deployments/run-events';

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
  // 'required' fails on an update whose document is gone by the time the change is read: say 'default' when that is expected.
  fullDocument: 'required' | 'default' = 'required',
  /** Told when the stream is open on the server (every later change will be heard), and when it is lost. */
  lifecycle: { opened?: () => void; lost?: () => void } = {},
): { close(): Promise<void> } {
  let stream: ChangeStream<T> | undefined;
  let resumeAfter: ResumeToken | undefined;
  let closed = false;
  const open = () => {
    if (closed) return;
    stream = collection.watch<T>(pipeline, { fullDocument, ...(resumeAfter ? { resumeAfter } : {}) });
    // The first resume token comes with the server's answer to the stream's opening.
    if (lifecycle.opened) stream.once('resumeTokenChanged', lifecycle.opened);
    stream.on('change', (change) => {
      resumeAfter = change._id;
      onChange(change);
    });
    stream.on('error', (err: Error & { codeName?: string }) => {
      lifecycle.lost?.();
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
      lifecycle.lost?.();
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
    [CHANGED_KEYS, ...RUN_EVENT_PIPELINE],
    (change) => {
      observe(change);
      const event = toRunEvent(change);
      if (event) emit(event);
    },
    log,
    'run',
  );
}
