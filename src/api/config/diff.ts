import { canonicalJson, sha256 } from '../../domain/audit/chain';
import type { CurrentObject } from '../../domain/config/types';

/* Comparing canonical specs: equal or not, what each field changes from and to, and a spec's hash. */

/** The hash `managed_by.spec_hash` keeps: any other value of the object's spec later is drift. */
export const specHash = (spec: unknown) => sha256(canonicalJson(spec));

/** Whether an object a source applied was changed since by another path: forced, or its spec no longer the one applied. */
export const driftOf = (object: CurrentObject) => Boolean(object.managed_by && (object.managed_by.forced_at || object.managed_by.spec_hash !== specHash(object.spec)));

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const child = (prefix: string, key: string | number) => (typeof key === 'number' ? `${prefix}[${key}]` : prefix ? `${prefix}.${key}` : key);

/**
 * Each field that differs, by its path (`steps[2].command`): maps compared key by key, lists item by
 * item (an item added or gone: from or to null), anything else whole. Keys in `to`'s order, then those only in `from`.
 */
export function diffFields(from: unknown, to: unknown, prefix = '', into: Record<string, { from: unknown; to: unknown }> = {}) {
  if (canonicalJson(from) === canonicalJson(to)) return into;
  if (isMap(from) && isMap(to)) {
    for (const key of new Set([...Object.keys(to), ...Object.keys(from)])) diffFields(from[key] ?? null, to[key] ?? null, child(prefix, key), into);
  } else if (Array.isArray(from) && Array.isArray(to)) {
    for (let index = 0; index < Math.max(from.length, to.length); index += 1) diffFields(from[index] ?? null, to[index] ?? null, child(prefix, index), into);
  } else into[prefix || 'spec'] = { from: from ?? null, to: to ?? null };
  return into;
}
