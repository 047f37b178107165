import { AuditEntryModel, type AuditEntry } from './model';
import { entryHash, GENESIS_HASH } from './chain';
import { anchorOf, type Head } from './trail';

export interface Verdict {
  ok: boolean;
  checked: number;
  first_broken: { seq: number; reason: string } | null;
}

/**
 * Walks an organization's chain from its start (seq 1 after the genesis, or the anchor retention left)
 * and names the first broken link: a missing seq (an entry deleted), an entry whose hash is not that of
 * its content (changed; or, when it links to its successor's place, a reordered pair), an entry whose
 * prev_hash is not its predecessor's hash. With a checkpoint (a head published earlier), also proves
 * the trail still holds it: the newest entries deleted are caught there. One pass, in constant memory.
 */
export async function verifyChain(organizationId: string, checkpoint?: Head): Promise<Verdict> {
  const anchor = await anchorOf(organizationId);
  let previous: Head = anchor ?? { seq: 0, hash: GENESIS_HASH };
  let checked = 0;
  let checkpointSeen = false;
  const broken = (seq: number, reason: string): Verdict => ({ ok: false, checked, first_broken: { seq, reason } });
  const cursor = AuditEntryModel.find({ organization_id: organizationId, seq: { $gt: previous.seq } }).sort({ seq: 1 }).lean<AuditEntry[]>().cursor();
  let entry = (await cursor.next()) as AuditEntry | null;
  try {
    while (entry) {
      const next = (await cursor.next()) as AuditEntry | null;
      const expected = previous.seq + 1;
      if (entry.seq !== expected) return broken(expected, `entry ${expected} is missing: deleted from the trail`);
      if (entryHash(entry) !== entry.hash) {
        const swapped = next && next.seq === entry.seq + 1 && entry.prev_hash === next.hash;
        return broken(entry.seq, swapped ? `entries ${entry.seq} and ${next.seq} are out of order: reordered` : `entry ${entry.seq} was changed: its hash does not match its content`);
      }
      if (entry.prev_hash !== previous.hash) return broken(entry.seq, `entry ${entry.seq} does not link to entry ${previous.seq}: prev_hash is not its hash (an entry replaced or reordered)`);
      if (checkpoint && entry.seq === checkpoint.seq) {
        if (entry.hash !== checkpoint.hash) return broken(entry.seq, `entry ${entry.seq} is not the checkpoint's: its hash differs (the trail was rewritten from here)`);
        checkpointSeen = true;
      }
      checked += 1;
      previous = { seq: entry.seq, hash: entry.hash };
      entry = next;
    }
  } finally {
    await cursor.close();
  }
  if (checkpoint && !checkpointSeen) {
    if (anchor && checkpoint.seq === anchor.seq && checkpoint.hash === anchor.hash) return { ok: true, checked, first_broken: null };
    if (anchor && checkpoint.seq < anchor.seq) return { ok: true, checked, first_broken: null };
    if (checkpoint.seq > previous.seq) return broken(previous.seq + 1, `the checkpoint's entry ${checkpoint.seq} is gone: entries ${previous.seq + 1} to ${checkpoint.seq} (the newest) were deleted`);
    return broken(checkpoint.seq, `the checkpoint's entry ${checkpoint.seq} does not match`);
  }
  return { ok: true, checked, first_broken: null };
}
