import { createHash } from 'node:crypto';
import type { AuditFields } from './model';

/** The `prev_hash` of an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Canonical JSON: object keys sorted (by UTF-16 code units, as Array.prototype.sort does), no
 * whitespace, Dates as ISO 8601 strings, undefined members left out. The same entry always gives
 * the same text, whatever order MongoDB returns its fields in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value === 'object') {
    const id = (value as { _bsontype?: string })._bsontype === 'ObjectId' ? String(value) : null;
    if (id !== null) return JSON.stringify(id);
    const keys = Object.keys(value as Record<string, unknown>).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The fields an entry's hash covers: everything it says, its place (seq) and its link (prev_hash). */
export function hashedFields(entry: AuditFields & { seq: number; prev_hash: string }) {
  return {
    organization_id: String(entry.organization_id),
    seq: entry.seq,
    at: entry.at,
    actor: entry.actor,
    source_address: entry.source_address ?? null,
    action: entry.action,
    target: entry.target,
    server_id: entry.server_id ?? null,
    outcome: entry.outcome,
    details: entry.details ?? {},
    prev_hash: entry.prev_hash,
  };
}

/** hash = SHA-256(prev_hash + canonical JSON of the entry), hex. */
export function entryHash(entry: AuditFields & { seq: number; prev_hash: string }): string {
  return createHash('sha256').update(entry.prev_hash).update(canonicalJson(hashedFields(entry))).digest('hex');
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
