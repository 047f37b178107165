import { isDuplicateKey } from '../database';
import type { Logger } from '../../logger';
import { entryHash } from './chain';
import type { AuditEntry } from './model';
import { dropChained, readyEntries, type PendingEntry } from './pending-entries';
import { alreadyChained, appendEntries, headOf, type Head } from './trail';

/** Entries moved per round at most. */
export const BATCH = 500;

/** What an entry still `pending` at chaining time says about itself. */
const UNKNOWN_NOTE = 'No outcome was recorded: Bosun stopped between the change and its outcome (or the command outlived its limit); whether the change took effect is unknown';

/**
 * Moves ready outbox entries into the trail, each organization's in order: seq +1, prev_hash the head's
 * hash, hash over both and the entry. Heads are kept between rounds; a duplicate key (another chainer
 * took a place: only while two run at once, after a heartbeat timeout) drops them and the round is
 * taken again from what is stored. Returns how many entries were chained.
 */
export class AuditChainer {
  private readonly heads = new Map<string, Head>();
  /** Whether an earlier chainer may have stopped between an append and the outbox's clean-up: true until a round succeeds. */
  private unsure = true;

  constructor(private readonly log: Logger) {}

  async round(): Promise<number> {
    const ready = await readyEntries(BATCH);
    if (!ready.length) return 0;
    // Only the first round (or one after a failure) looks for entries already appended: the unique
    // trail's _id (the outbox id) would refuse them anyway, and a round that succeeded left none behind.
    const done = this.unsure ? await alreadyChained(ready.map((entry) => entry._id)) : new Set<string>();
    if (done.size) await dropChained([...done]);
    const byOrganization = new Map<string, PendingEntry[]>();
    for (const entry of ready) {
      if (done.has(entry._id)) continue;
      const list = byOrganization.get(entry.organization_id) ?? [];
      list.push(entry);
      byOrganization.set(entry.organization_id, list);
    }
    for (const [organizationId, entries] of byOrganization) {
      let head = this.heads.get(organizationId) ?? (await headOf(organizationId));
      const chained: AuditEntry[] = entries.map((pending) => {
        const { _id, ready_at: _ready, ...fields } = pending;
        const unknown = fields.outcome === 'pending';
        const entry = {
          ...fields,
          outcome: unknown ? 'unknown' : fields.outcome,
          details: unknown ? { ...fields.details, unknown: UNKNOWN_NOTE } : (fields.details ?? {}),
          seq: head.seq + 1,
          prev_hash: head.hash,
          _id,
        };
        const hash = entryHash(entry);
        head = { seq: entry.seq, hash };
        return { ...entry, hash };
      });
      try {
        await appendEntries(chained);
        this.heads.set(organizationId, head);
      } catch (error) {
        this.heads.delete(organizationId);
        this.unsure = true;
        if (!isDuplicateKey(error)) throw error;
        this.log.warn({ organizationId }, 'another audit chainer appended first: reading the head again');
        return 0;
      }
    }
    await dropChained(ready.map((entry) => entry._id));
    this.unsure = false;
    return ready.length;
  }

  /** The heads are read again from the trail (after retention pruned, or a failed round). */
  forget(): void {
    this.heads.clear();
    this.unsure = true;
  }
}
