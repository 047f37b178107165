import { isAlias, isMap, isScalar, isSeq, type Alias, type Node, type YAMLMap } from 'yaml';
import type { ConfigProblem, SpecPath } from './types';
import { startOf } from './yaml-nodes';

/** `deploy/web.yaml:14:7: steps[2].timeout_seconds must be at most 86400`. */
export const formatProblem = (p: ConfigProblem): string => `${p.file}:${p.line}:${p.column}: ${p.message}`;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A spec path as files and messages write it: `steps[2].timeout_seconds`, `labels["a.b"]`; `spec` for the whole spec. */
export function specPathText(path: SpecPath): string {
  const text = path
    .map((part, i) => {
      if (typeof part === 'number') return `[${part}]`;
      if (!PLAIN_KEY.test(part)) return `[${JSON.stringify(part)}]`;
      return i === 0 ? part : `.${part}`;
    })
    .join('');
  return text === '' ? 'spec' : text;
}

/**
 * The offset of the spec's node at `path`: a mapping entry's key, a sequence's item; where the path
 * stops existing, its nearest ancestor that exists; `spec:`'s value for []. Aliases are followed to their anchors.
 */
export function specOffsetOf(spec: YAMLMap, sourceOf: ReadonlyMap<Alias, Node>, path: SpecPath): number {
  let node: unknown = spec;
  let offset = startOf(spec, 0);
  for (const part of path) {
    if (isAlias(node)) node = sourceOf.get(node);
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === String(part));
      if (!pair) break;
      offset = startOf(pair.key as Node, offset);
      node = pair.value;
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part] as Node | undefined;
      if (!item) break;
      offset = startOf(item, offset);
      node = item;
    } else {
      break;
    }
  }
  return offset;
}
