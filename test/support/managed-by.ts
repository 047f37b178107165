import { MongoClient, ObjectId } from 'mongodb';

/*
 * Objects marked as a Git source applied them, written straight into MongoDB: what an apply of
 * config as code (issue 38) sets, for tests of the paths that must then refuse to change them.
 */

/** Each config kind's collection (the command policy lives on its organization, as `policy_managed_by`). */
export const COLLECTION_OF = {
  Deployment: 'deployments',
  Pipeline: 'pipelines',
  Schedule: 'schedules',
  Freeze: 'freezes',
  Team: 'teams',
  ServiceAccount: 'identities',
  RoleBinding: 'rolebindings',
  NotificationChannel: 'notification_channels',
} as const;

export type ManagedKind = keyof typeof COLLECTION_OF;

export interface Source {
  source: string;
  revision: string | null;
  path: string;
}

const managedBy = ({ source, revision, path }: Source) => ({ source, revision, path, applied_at: new Date(), spec_hash: 'sha256:test', forced_at: null, forced_by: null });

/** Marks the object `id` of `kind` as applied by `source`. */
export async function markManaged(mongoUri: string, kind: ManagedKind, id: string, source: Source): Promise<void> {
  const client = await MongoClient.connect(mongoUri);
  try {
    const marked = await client.db().collection(COLLECTION_OF[kind]).updateOne({ _id: new ObjectId(id) }, { $set: { managed_by: managedBy(source) } });
    if (marked.matchedCount !== 1) throw new Error(`no ${kind} ${id} to mark managed`);
  } finally {
    await client.close();
  }
}

/** Marks the command policy of the organization `slug` as applied by `source`. */
export async function markPolicyManaged(mongoUri: string, slug: string, source: Source): Promise<void> {
  const client = await MongoClient.connect(mongoUri);
  try {
    const marked = await client.db().collection('organizations').updateOne({ slug }, { $set: { policy_managed_by: managedBy(source) } });
    if (marked.matchedCount !== 1) throw new Error(`no organization ${slug}`);
  } finally {
    await client.close();
  }
}
