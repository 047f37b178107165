import { isMap, isScalar, type Node, type Pair, type YAMLMap } from 'yaml';
import { CONFIG_KINDS, type ConfigKind } from './types';
import { startOf, type NodeProblem } from './yaml-nodes';

/*
 * A config document is a mapping of exactly `kind`, `name` and `spec`: a known kind, a name a
 * person can read back, and a spec that is a mapping (each kind's adapter checks what is in it).
 */

export const CONFIG_NAME_MAX_CHARACTERS = 128;

const FIELDS = ['kind', 'name', 'spec'] as const;
// C0 and C1 controls, DEL, and the line and paragraph separators: none reads back in a list or a log line.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export interface DocumentShape {
  /** As written when they are strings, for the problems of the document (null otherwise). */
  label: { kind: string | null; name: string | null };
  kind: ConfigKind | null;
  name: string | null;
  /** The `kind:` key, where the document is said to begin. */
  kindKey: Node | null;
  spec: YAMLMap | null;
  problems: NodeProblem[];
}

const valueOf = (pair: Pair | undefined): unknown => (isScalar(pair?.value) ? pair.value.value : undefined);
const textOf = (pair: Pair | undefined): string | null => {
  const value = valueOf(pair);
  return typeof value === 'string' ? value : null;
};

function nameProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'name must be a string';
  if (value.trim() === '') return 'name must not be empty';
  if ([...value].length > CONFIG_NAME_MAX_CHARACTERS) return `name must be at most ${CONFIG_NAME_MAX_CHARACTERS} characters`;
  if (CONTROL.test(value)) return 'name must not contain control characters';
  if (value.trim() !== value) return 'name must not begin or end with spaces';
  return null;
}

/** The document's fields and every problem of its shape (the nodes inside it are checked apart). */
export function checkShape(contents: Node): DocumentShape {
  const at = startOf(contents, 0);
  if (!isMap(contents)) {
    return { label: { kind: null, name: null }, kind: null, name: null, kindKey: null, spec: null, problems: [{ offset: at, message: 'a document must be a mapping of kind, name and spec' }] };
  }
  const problems: NodeProblem[] = [];
  const fields = new Map<string, Pair>();
  for (const pair of contents.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key !== 'string') continue;
    if (!(FIELDS as readonly string[]).includes(key)) {
      problems.push({ offset: startOf(pair.key as Node, at), message: `unknown key ${JSON.stringify(key)}: a document has kind, name and spec only` });
    } else if (!fields.has(key)) {
      fields.set(key, pair);
    }
  }
  for (const field of FIELDS) if (!fields.has(field)) problems.push({ offset: at, message: `${field} is missing: a document has kind, name and spec` });
  // An empty value (`spec:` and nothing) is where its key is.
  const where = (pair: Pair) => startOf(isScalar(pair.value) && pair.value.value === null && pair.value.source === '' ? (pair.key as Node) : ((pair.value as Node | null) ?? (pair.key as Node)), at);

  const kindPair = fields.get('kind');
  const kindText = textOf(kindPair);
  const kind = (CONFIG_KINDS as readonly string[]).includes(kindText ?? '') ? (kindText as ConfigKind) : null;
  if (kindPair && !kind) {
    const given = kindText === null ? 'kind' : `kind ${JSON.stringify(kindText)}`;
    problems.push({ offset: where(kindPair), message: `${given} is not one of ${CONFIG_KINDS.join(', ')}` });
  }

  const namePair = fields.get('name');
  const nameMessage = namePair ? nameProblem(valueOf(namePair)) : null;
  if (namePair && nameMessage) problems.push({ offset: where(namePair), message: nameMessage });

  const specPair = fields.get('spec');
  const spec = isMap(specPair?.value) ? specPair.value : null;
  if (specPair && !spec) problems.push({ offset: where(specPair), message: 'spec must be a mapping' });

  return {
    label: { kind: kindText, name: textOf(namePair) },
    kind,
    name: namePair && !nameMessage ? (valueOf(namePair) as string) : null,
    kindKey: (kindPair?.key as Node | undefined) ?? null,
    spec,
    problems,
  };
}
