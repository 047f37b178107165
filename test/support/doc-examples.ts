import { readFileSync } from 'node:fs';
import path from 'node:path';

/*
 * A documentation page's JSON examples, and where an answer of the API differs from one: what
 * test/openapi/docs-examples.test.ts holds docs/api.md to.
 */

export interface DocExample {
  /** The heading the example is under. */
  heading: string;
  line: number;
  json: unknown;
}

/** Every ```json block of a page of docs/, with the heading it is under. */
export function jsonExamples(page: string): DocExample[] {
  const lines = readFileSync(path.join(__dirname, '../../docs', page), 'utf8').split('\n');
  const examples: DocExample[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    if (line.trim() !== '```json') continue;
    const end = lines.findIndex((l, at) => at > i && l.trim() === '```');
    examples.push({ heading, line: i + 1, json: JSON.parse(lines.slice(i + 1, end).join('\n')) });
    i = end;
  }
  return examples;
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** "…" elides any text, with the id, hash or word it ends ("6b00c3…", "SHA256:mNaP0…"). */
const elision = (example: string) => new RegExp(`^${example.split(/[A-Za-z0-9+=_-]*…/).map(escaped).join('[\\s\\S]*')}$`);
const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
/** `data.*.host` matches data.0.host: `*` stands for one index or key. */
const matcher = (pattern: string) => new RegExp(`^${pattern.split('*').map(escaped).join('[^.]+')}$`);

/**
 * Where `actual` differs from `example`, each difference a line naming its path: the same fields at
 * every depth, arrays as long; the same values, but for what an example's value stands for — a text
 * with "…" any text in its place, a timestamp any timestamp, a number any number — and the paths of
 * `varying` (values of the machine the test runs on), which need only be of the example's kind.
 */
export function differences(example: unknown, actual: unknown, varying: readonly string[] = [], at = ''): string[] {
  const where = at || '(top)';
  if (kind(example) !== kind(actual)) return [`${where}: expected ${kind(example)} as ${JSON.stringify(example)}, got ${JSON.stringify(actual)}`];
  if (varying.some((pattern) => matcher(pattern).test(at))) return [];
  if (Array.isArray(example)) {
    const list = actual as unknown[];
    if (list.length !== example.length) return [`${where}: expected ${example.length} items, got ${list.length}: ${JSON.stringify(actual)}`];
    return example.flatMap((item, i) => differences(item, list[i], varying, at ? `${at}.${i}` : String(i)));
  }
  if (kind(example) === 'object') {
    const want = example as Record<string, unknown>;
    const got = actual as Record<string, unknown>;
    const missing = Object.keys(want).filter((key) => !(key in got)).map((key) => `${at ? `${at}.` : ''}${key}: documented, not answered`);
    const extra = Object.keys(got).filter((key) => !(key in want)).map((key) => `${at ? `${at}.` : ''}${key}: answered (${JSON.stringify(got[key])}), not documented`);
    const both = Object.keys(want).filter((key) => key in got);
    return [...missing, ...extra, ...both.flatMap((key) => differences(want[key], got[key], varying, at ? `${at}.${key}` : key))];
  }
  if (typeof example === 'number') return [];
  if (typeof example === 'string') {
    const text = actual as string;
    if (TIMESTAMP.test(example)) return TIMESTAMP.test(text) ? [] : [`${where}: expected a timestamp, got ${JSON.stringify(text)}`];
    if (example.includes('…')) return elision(example).test(text) ? [] : [`${where}: expected ${JSON.stringify(example)}, got ${JSON.stringify(text)}`];
  }
  return example === actual ? [] : [`${where}: expected ${JSON.stringify(example)}, got ${JSON.stringify(actual)}`];
}
