import type { ChangeStreamDocument } from 'mongodb';
import mongoose from 'mongoose';
import { ConversationModel } from '../../domain/conversations/model';
import { DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import type { Logger } from '../../logger';
import { ApiTokenModel } from '../../domain/tokens/model';
import type { DeploymentRunUpdatedEvent } from '../../domain/events';
import { RUN_EVENT_PIPELINE, toRunEvent } from '../../domain/deployments/run-events';
import { watchWithResume } from '../../domain/change-streams';

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
