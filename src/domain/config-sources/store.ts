import { Types } from 'mongoose';
import type { Actor } from '../access/actor';
import { inTransaction } from '../database';
import { recordNotificationEvent } from '../notifications/event-outbox';
import type { SecretBox } from '../secrets/secret-box';
import type { RepositoryCredentials } from '../config/git';
import { ConfigSourceModel, type ConfigSource } from './model';

/*
 * The one owner of sync sources' writes: made, changed, deleted, a host key pinned, and each sync's
 * outcome recorded (a failure's `config.sync_failed` event in the same transaction as its status).
 */

export { ConfigSourceModel, type ConfigSource } from './model';

const associatedData = (sourceId: string) => `config-source:${sourceId}`;

export const sealSourceCredentials = (box: SecretBox, sourceId: string, credentials: RepositoryCredentials) => box.encrypt(JSON.stringify(credentials), associatedData(sourceId));

/** The stored credentials do not decrypt: this process's master key differs from the one that sealed them. */
export class SourceCredentialsUnreadableError extends Error {
  override name = 'SourceCredentialsUnreadableError';
}

/** A source as a sync reads it: with its credentials opened (server side only). */
export async function loadSourceForSync(sourceId: string, box: SecretBox): Promise<{ source: ConfigSource; credentials: RepositoryCredentials | null } | null> {
  const source = await ConfigSourceModel.findById(sourceId).select('+credentials').lean<ConfigSource>();
  if (!source) return null;
  if (!source.credentials) return { source, credentials: null };
  try {
    return { source, credentials: JSON.parse(box.decrypt(source.credentials, associatedData(sourceId))) as RepositoryCredentials };
  } catch {
    throw new SourceCredentialsUnreadableError(`The credentials of sync source ${source.name} cannot be decrypted: this worker's BOSUN_SECRET_KEY differs from the API's`);
  }
}

export interface SourceFields {
  name: string;
  git: { url: string; ref: string; path: string };
  every: string | null;
  every_seconds: number | null;
  prune: boolean;
  /** Sealed already (sealSourceCredentials with this `_id`), or null. */
  credentials: string | null;
  host_key: string | null;
  host_key_fingerprint: string | null;
  web_url: string | null;
  run_as: Actor;
}

export async function createSource(organizationId: string, _id: Types.ObjectId, fields: SourceFields, by: Actor): Promise<ListedSource> {
  await ConfigSourceModel.create({ _id, organization_id: new Types.ObjectId(organizationId), ...fields, created_by: by, updated_by: by });
  return (await findSource(organizationId, _id.toString()))!;
}

/** A source as the API reads it: whether it has credentials, not even them sealed. */
export type ListedSource = Omit<ConfigSource, 'credentials'> & { has_credentials: boolean };

const listed = ({ credentials, ...source }: ConfigSource): ListedSource => ({ ...source, has_credentials: Boolean(credentials) });

export async function findSource(organizationId: string, sourceId: string): Promise<ListedSource | null> {
  if (!Types.ObjectId.isValid(sourceId)) return null;
  const source = await ConfigSourceModel.findOne({ _id: sourceId, organization_id: organizationId }).select('+credentials').lean<ConfigSource>();
  return source && listed(source);
}

export async function listSources(organizationId: string): Promise<ListedSource[]> {
  return (await ConfigSourceModel.find({ organization_id: organizationId }).select('+credentials').sort({ name: 1 }).lean<ConfigSource[]>()).map(listed);
}

/** Changes a source's settings (a new host key pinned clears what a refused sync was offered). */
export async function updateSource(organizationId: string, sourceId: string, fields: Partial<SourceFields>, by: Actor): Promise<ListedSource | null> {
  const clearOffer = fields.host_key !== undefined ? { 'status.offered_host_key': null } : {};
  await ConfigSourceModel.updateOne({ _id: sourceId, organization_id: organizationId }, { $set: { ...fields, ...clearOffer, updated_by: by } });
  return findSource(organizationId, sourceId);
}

export async function deleteSource(organizationId: string, sourceId: string): Promise<boolean> {
  return (await ConfigSourceModel.deleteOne({ _id: sourceId, organization_id: organizationId })).deletedCount === 1;
}

/** Pins the host key the last refused sync was offered; null when none was offered. */
export async function pinOfferedHostKey(organizationId: string, sourceId: string, by: Actor): Promise<boolean> {
  const source = await ConfigSourceModel.findOne({ _id: sourceId, organization_id: organizationId }, { status: 1 }).lean<ConfigSource>();
  const offered = source?.status?.offered_host_key;
  if (!offered) return false;
  // Only the key read: another sync offering another meanwhile is not pinned unseen.
  const pinned = await ConfigSourceModel.updateOne(
    { _id: sourceId, organization_id: organizationId, 'status.offered_host_key.key': offered.key },
    { $set: { host_key: offered.key, host_key_fingerprint: offered.fingerprint, 'status.offered_host_key': null, updated_by: by } },
  );
  return pinned.modifiedCount === 1;
}

/** A plan as a source's status keeps it: counts, the first problems, its hash. */
export interface PlanSummary {
  revision: string | null;
  plan_hash: string | null;
  create: number;
  update: number;
  delete: number;
  unchanged: number;
  errors: string[];
  error_count: number;
  drift: Array<{ kind: string; name: string; path: string; forced_at: string | null; forced_by: string | null }>;
}

const lastPlanOf = ({ drift: _drift, errors, ...plan }: PlanSummary, at: Date) => ({ ...plan, problems: errors, at });

/** A sync that applied its revision (or found nothing to change). */
export async function recordSyncSucceeded(sourceId: string, plan: PlanSummary, at = new Date()): Promise<void> {
  await ConfigSourceModel.updateOne(
    { _id: sourceId },
    { $set: { 'status.revision_applied': plan.revision, 'status.last_plan': lastPlanOf(plan, at), 'status.last_error': null, 'status.synced_at': at, 'status.drift': plan.drift, 'status.offered_host_key': null } },
  );
}

export interface SyncFailure {
  code: string;
  message: string;
  revision: string | null;
  /** The plan made, when the repository was read (a plan with errors). */
  plan: PlanSummary | null;
  /** What an SSH host offered instead of a pinned (or missing) key. */
  offered: { key: string; fingerprint: string } | null;
}

/**
 * A sync that applied nothing, and why. Told (`config.sync_failed`) once per failure: again only
 * when it fails differently (another code or revision) or after a sync that went well.
 */
export async function recordSyncFailed(sourceId: string, failure: SyncFailure, at = new Date()): Promise<void> {
  await inTransaction(async (session) => {
    const source = await ConfigSourceModel.findById(sourceId, { organization_id: 1, name: 1, git: 1, status: 1 }).session(session).lean<ConfigSource>();
    if (!source) return;
    const previous = source.status?.last_error;
    const last_error = { code: failure.code, message: failure.message, at, revision: failure.revision };
    await ConfigSourceModel.updateOne(
      { _id: sourceId },
      {
        $set: {
          'status.last_error': last_error,
          ...(failure.plan ? { 'status.last_plan': lastPlanOf(failure.plan, at), 'status.drift': failure.plan.drift } : {}),
          ...(failure.offered ? { 'status.offered_host_key': failure.offered } : {}),
        },
      },
      { session },
    );
    if (previous && previous.code === failure.code && previous.revision === failure.revision) return;
    await recordNotificationEvent(
      {
        organizationId: source.organization_id,
        type: 'config.sync_failed',
        subject: { kind: 'config_source', id: sourceId },
        at,
        payload: {
          summary: `Sync source ${source.name}: nothing applied (${failure.code}): ${failure.message}`,
          source: { id: sourceId, name: source.name, url: source.git.url, ref: source.git.ref, revision: failure.revision, revision_applied: source.status?.revision_applied ?? null },
          error: { code: failure.code, message: failure.message, problems: failure.plan?.errors ?? [] },
          console_path: '/config',
        },
      },
      { session },
    );
  });
}
