import type { ChangeStreamDocument } from 'mongodb';
import mongoose from 'mongoose';
import { ConversationModel } from '../../domain/conversations/model';
import { DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import { ApiTokenModel } from '../../domain/tokens/model';
import { PipelineRunModel } from '../../domain/pipelines/model';
import { ConfigSourceModel } from '../../domain/config-sources/model';
import type { DeploymentRunUpdatedEvent } from '../../domain/events';
import { runChanges, toRunEvent } from '../../domain/deployments/run-events';
import type { ChangeListener } from '../../domain/change-streams';

/** Change streams carry each update's exact post-image only where the collection keeps them (MongoDB 6.0+). */
export async function enableChangeStreamImages(): Promise<void> {
  const db = mongoose.connection.db!;
  for (const name of [DeploymentRunModel.collection.collectionName, ConversationModel.collection.collectionName, ApiTokenModel.collection.collectionName, PipelineRunModel.collection.collectionName, ConfigSourceModel.collection.collectionName]) {
    await db.createCollection(name).catch((error: { codeName?: string }) => {
      if (error.codeName !== 'NamespaceExists') throw error;
    });
    await db.command({ collMod: name, changeStreamPreAndPostImages: { enabled: true } });
  }
}

/**
 * Hands every persisted change of a run to `emit`: persist first, then relay. Each API process
 * listens (on its one change stream, src/roles/api.ts), so clients on any process see every run.
 * `observe` sees every change as it came (metrics).
 */
export function runRelay(
  emit: (event: DeploymentRunUpdatedEvent) => void,
  observe: (change: ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] }) => void = () => undefined,
  organizationRunsChanged: (organizationId: string) => void = () => undefined,
): ChangeListener {
  return {
    ...runChanges(DeploymentRunModel.collection.collectionName),
    onChange: (change) => {
      const run = change as ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] };
      observe(run);
      const event = toRunEvent(run);
      if (event) emit(event);
      const organization = changesWhatWaits(run);
      if (organization) organizationRunsChanged(organization);
    },
  };
}

/**
 * The organization of a run (not a fleet run's target) that began, or changed status or gate: what
 * a person's list of runs in progress and waiting for them depends on. Null for any other change.
 */
function changesWhatWaits(change: ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] }): string | null {
  if (change.operationType !== 'insert' && change.operationType !== 'update' && change.operationType !== 'replace') return null;
  const doc = change.fullDocument;
  if (!doc?.organization_id || doc.parent_run_id) return null;
  const keys = change.operationType === 'update' ? (change.changedKeys ?? []) : ['status'];
  return keys.some((key) => key === 'status' || key === 'gate' || key.startsWith('gate.')) ? doc.organization_id.toString() : null;
}
