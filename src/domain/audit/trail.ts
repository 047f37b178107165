import { AuditAnchorModel, AuditEntryModel, type AuditEntry } from './model';
import { GENESIS_HASH } from './chain';

/*
 * The trail (`audit`) and its anchors: the one module that writes them. Entries are only ever
 * appended (by the chainer) and, past the retention time, pruned oldest first with an anchor that
 * keeps the chain verifiable.
 */

export interface Head {
  seq: number;
  hash: string;
}

/** An organization's newest entry (seq, hash); its anchor when everything was pruned; else the genesis (0, zeros). */
export async function headOf(organizationId: string): Promise<Head> {
  const last = await AuditEntryModel.findOne({ organization_id: organizationId }, { seq: 1, hash: 1 }).sort({ seq: -1 }).lean();
  if (last) return { seq: last.seq, hash: last.hash };
  return (await anchorOf(organizationId)) ?? { seq: 0, hash: GENESIS_HASH };
}

/** Where an organization's chain starts: the last pruned entry, or null while nothing was pruned. */
export async function anchorOf(organizationId: string): Promise<Head | null> {
  const anchor = await AuditAnchorModel.findOne({ organization_id: organizationId }).lean();
  return anchor ? { seq: anchor.seq, hash: anchor.hash } : null;
}

/** Appends entries in order; refused (duplicate key) when another chainer wrote one of their places first. */
export async function appendEntries(entries: AuditEntry[]): Promise<void> {
  if (entries.length) await AuditEntryModel.collection.insertMany(entries as never[], { ordered: true });
}

/** Which of these outbox entries are already in the trail (a chainer stopped between the append and the outbox's clean-up). */
export async function alreadyChained(pendingIds: string[]): Promise<Set<string>> {
  const found = await AuditEntryModel.find({ _id: { $in: pendingIds } }, { _id: 1 }).lean();
  return new Set(found.map((entry) => String(entry._id)));
}

/** Organizations with entries older than `before`. */
export async function organizationsWithEntriesBefore(before: Date): Promise<string[]> {
  return (await AuditEntryModel.distinct('organization_id', { at: { $lt: before } })) as string[];
}

/**
 * Prunes an organization's entries older than `before`, keeping the chain whole: the newest pruned
 * entry becomes the anchor (recorded first), and only entries up to it are deleted. Returns how many.
 */
export async function pruneBefore(organizationId: string, before: Date): Promise<number> {
  const last = await AuditEntryModel.findOne({ organization_id: organizationId, at: { $lt: before } }, { seq: 1, hash: 1 }).sort({ seq: -1 }).lean();
  if (!last) return 0;
  // Entries are chained in order, but an entry's `at` is when its change began: prune a prefix of the chain only.
  const newer = await AuditEntryModel.findOne({ organization_id: organizationId, seq: { $lte: last.seq }, at: { $gte: before } }, { seq: 1 }).sort({ seq: 1 }).lean();
  const upTo = newer ? newer.seq - 1 : last.seq;
  if (upTo < 1) return 0;
  const anchor = upTo === last.seq ? last : await AuditEntryModel.findOne({ organization_id: organizationId, seq: upTo }, { seq: 1, hash: 1 }).lean();
  if (!anchor) return 0;
  await AuditAnchorModel.updateOne({ organization_id: organizationId }, { $set: { seq: anchor.seq, hash: anchor.hash, pruned_at: new Date() } }, { upsert: true });
  const { deletedCount } = await AuditEntryModel.collection.deleteMany({ organization_id: organizationId, seq: { $lte: anchor.seq } });
  return deletedCount;
}
