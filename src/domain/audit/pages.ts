import { AuditEntryModel, type AuditEntry } from './model';
import { anchorOf, headOf } from './trail';

/*
 * One page of the trail, newest first, reached by a cursor (the seq it starts after or before) or by
 * a page number: a cursor reads the chain's index from where it stands, whatever the trail's size.
 */

/** Where a page lies: `before` (older than a seq), `after` (newer than a seq, the nearest ones), or a page number. */
export type PagePlace = { before: number } | { after: number } | { page: number };

export interface TrailPage {
  entries: AuditEntry[];
  /** Entries the filter matches. */
  total: number;
  /** Entries the filter matches that are newer than this page's first. */
  offset: number;
  /** The `before` of the next older page; null: this page holds the oldest. */
  olderBefore: number | null;
  /** The `after` of the next newer page; null: this page holds the newest. */
  newerAfter: number | null;
}

type Query = Record<string, unknown>;

/** Only the organization: the chain has no gaps, so its counts are its head's seq less its anchor's. */
const isWholeTrail = (query: Query) => Object.keys(query).length === 1;

/** How many entries match `query` (those above `above` only, when given): arithmetic on the whole trail, else counted. */
async function countOf(organizationId: string, query: Query, above = 0): Promise<number> {
  if (isWholeTrail(query)) {
    const [head, anchor] = await Promise.all([headOf(organizationId), anchorOf(organizationId)]);
    return Math.max(0, head.seq - Math.max(above, anchor?.seq ?? 0));
  }
  return AuditEntryModel.countDocuments(above ? { ...query, seq: { $gt: above } } : query);
}

const exists = async (query: Query) => (await AuditEntryModel.exists(query)) !== null;

/** The page of `query`'s entries (an auditQuery: one organization's) at `place`, `perPage` of them, newest first. */
export async function trailPage(organizationId: string, query: Query, place: PagePlace, perPage: number): Promise<TrailPage> {
  let entries: AuditEntry[];
  if ('after' in place) entries = (await AuditEntryModel.find({ ...query, seq: { $gt: place.after } }).sort({ seq: 1 }).limit(perPage).lean<AuditEntry[]>()).reverse();
  else if ('before' in place) entries = await AuditEntryModel.find({ ...query, seq: { $lt: place.before } }).sort({ seq: -1 }).limit(perPage).lean<AuditEntry[]>();
  else entries = await AuditEntryModel.find(query).sort({ seq: -1 }).skip((place.page - 1) * perPage).limit(perPage).lean<AuditEntry[]>();

  const newest = entries[0]?.seq;
  const oldest = entries.at(-1)?.seq;
  // An empty page's neighbours lie on either side of its cursor.
  const newerBound = newest ?? ('before' in place ? place.before - 1 : undefined);
  const olderBound = oldest ?? ('after' in place ? place.after + 1 : undefined);
  const [total, offset, hasNewer, hasOlder] = await Promise.all([
    countOf(organizationId, query),
    'page' in place ? (place.page - 1) * perPage : newerBound === undefined ? 0 : countOf(organizationId, query, newerBound),
    newerBound === undefined ? false : exists({ ...query, seq: { $gt: newerBound } }),
    olderBound === undefined ? false : exists({ ...query, seq: { $lt: olderBound } }),
  ]);
  return { entries, total, offset, newerAfter: hasNewer ? newerBound! : null, olderBefore: hasOlder ? olderBound! : null };
}
