import { isAlias, isMap, isScalar, isSeq, type Alias, type Node } from 'yaml';

/*
 * What a config document's YAML may hold beyond the syntax: plain JSON values under string keys,
 * each key once per mapping, the core schema's tags only, and aliases that neither loop nor expand
 * the document past a bound. Walked once over the written nodes: an alias is never followed.
 */

/** Values the aliases of one document may add when expanded: past it, a bomb (its anchors are counted once each). */
export const CONFIG_ALIAS_EXPANSION_LIMIT = 100_000;

const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((name) => `tag:yaml.org,2002:${name}`));
/** `!` is the non-specific tag: it only makes a scalar a string. */
const NON_SPECIFIC_TAG = '!';

/** A problem at an offset of the file's text. */
export interface NodeProblem {
  offset: number;
  message: string;
}

export interface CheckedNodes {
  problems: NodeProblem[];
  /** Each alias's anchored node, to find positions through it. */
  sourceOf: Map<Alias, Node>;
  firstAlias: Alias | null;
}

export const startOf = (node: Node | null | undefined, fallback: number): number => node?.range?.[0] ?? fallback;

const shortTag = (tag: string) => tag.replace(/^tag:yaml\.org,2002:/, '!!');

function scalarProblem(value: unknown): string | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a number must be finite (.inf and .nan are not JSON)';
  return 'a value must be a string, a number, true, false or null';
}

/** Every problem of the nodes under `root` (a document's contents), in the order they are written. */
export function checkNodes(root: Node, lineOf: (offset: number) => number): CheckedNodes {
  const problems: NodeProblem[] = [];
  const anchors = new Map<string, Node>();
  const sourceOf = new Map<Alias, Node>();
  /** Each finished node's size with its aliases expanded: an alias to an unfinished one is a cycle. */
  const sizes = new Map<Node, number>();
  let firstAlias: Alias | null = null;
  let expansion = 0;
  const problem = (node: Node, message: string) => problems.push({ offset: startOf(node, 0), message });

  const visitAlias = (alias: Alias): number => {
    firstAlias ??= alias;
    const source = anchors.get(alias.source);
    if (!source) {
      problem(alias, `no anchor &${alias.source} before this alias`);
      return 1;
    }
    sourceOf.set(alias, source);
    const size = sizes.get(source);
    if (size === undefined) {
      problem(alias, `alias *${alias.source} is inside its own anchor: a cycle is refused`);
      return 1;
    }
    const before = expansion;
    expansion += size;
    if (before <= CONFIG_ALIAS_EXPANSION_LIMIT && expansion > CONFIG_ALIAS_EXPANSION_LIMIT) {
      problem(alias, `aliases expand this document past ${CONFIG_ALIAS_EXPANSION_LIMIT} values: refused as an alias bomb`);
    }
    return size;
  };

  const visit = (node: Node): number => {
    if (isAlias(node)) return visitAlias(node);
    if (node.anchor) anchors.set(node.anchor, node);
    if (node.tag && node.tag !== NON_SPECIFIC_TAG && !CORE_TAGS.has(node.tag)) {
      problem(node, `tag ${shortTag(node.tag)} is refused: only the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)`);
    }
    let size = 1;
    if (isScalar(node)) {
      const message = scalarProblem(node.value);
      if (message) problem(node, message);
    } else if (isMap(node)) {
      const firstLine = new Map<string, number>();
      for (const pair of node.items) {
        const at = startOf(pair.key as Node | null, startOf(node, 0));
        if (pair.key !== null && typeof pair.key === 'object') size += visit(pair.key as Node);
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof key !== 'string') {
          problems.push({ offset: at, message: 'a key must be a string (quote it)' });
        } else if (firstLine.has(key)) {
          problems.push({ offset: at, message: `duplicate key ${JSON.stringify(key)} (first at line ${firstLine.get(key)})` });
        } else {
          firstLine.set(key, lineOf(at));
        }
        if (pair.value) size += visit(pair.value as Node);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) if (item) size += visit(item as Node);
    }
    sizes.set(node, size);
    return size;
  };

  visit(root);
  return { problems, sourceOf, firstAlias };
}
