import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/*
 * Files small enough to read in one sitting (docs/development.md): no file of src/, activities/ or
 * workflows/ over 320 lines, no function over 120 — lines as an editor numbers them, a function's
 * from the line it starts on to the line it ends on. Only a file that is a table of data may be longer.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const MAX_FILE_LINES = 320;
const MAX_FUNCTION_LINES = 120;

/** Files that are a table of data and nothing else, each with why it is one table (none is over today). */
const DATA_TABLES: Record<string, string> = {};

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Something over its limit: `key` is its file, or its file and the function's name. */
interface Over {
  key: string;
  lines: number;
  limit: number;
}

/** A function's name: its own, or that of what holds it (`const f = () => …`, `{ f: function () … }`); else where it starts. */
function nameOf(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  const holder = node.parent;
  const name = node.name ?? ((ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isPropertyDeclaration(holder)) ? holder.name : undefined);
  return name ? name.getText(file) : `(anonymous, line ${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1})`;
}

function measure(rel: string, text = readFileSync(path.join(ROOT, rel), 'utf8')): Over[] {
  const found: Over[] = [];
  const fileLines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (fileLines > MAX_FILE_LINES) found.push({ key: rel, lines: fileLines, limit: MAX_FILE_LINES });
  const file = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, rel.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lineOf = (position: number) => file.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(file)) + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ key: `${rel} ${nameOf(node, file)}`, lines, limit: MAX_FUNCTION_LINES });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const OVER = ['src', 'activities', 'workflows'].flatMap(sources).flatMap((rel) => measure(rel));
const said = ({ key, lines, limit }: Over) => `${key}: ${lines} lines (at most ${limit})`;

describe('sizes: files and functions a newcomer reads in one sitting', () => {
  test(`no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}, but a table of data`, () => {
    expect(OVER.filter((over) => !(over.key in DATA_TABLES)).map(said)).toEqual([]);
  });

  test('each table of data listed is still over the limit (one shrunk leaves the list)', () => {
    const over = new Set(OVER.map((o) => o.key));
    expect(Object.keys(DATA_TABLES).filter((key) => !over.has(key))).toEqual([]);
  });

  test('the check sees what it checks: each kind of function, and a file, measured from their first line to their last', () => {
    const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  void ${i};`).join('\n');
    const fn = (head: string, lines: number, tail = '}') => `${head}\n${body(lines)}\n${tail}`;
    const code = [
      fn('function declared() {', MAX_FUNCTION_LINES + 1),
      fn('const arrow = () => {', MAX_FUNCTION_LINES + 1, '};'),
      fn('const held = { expressed: function () {', MAX_FUNCTION_LINES + 1, '} };'),
      fn('class Holder {\n  method() {', MAX_FUNCTION_LINES + 1, '}\n}'),
      fn('export function Page() {', MAX_FUNCTION_LINES, '}'),
    ].join('\n');
    expect(measure('example.tsx', `${code}\n`).map(said)).toEqual([
      `example.tsx: ${code.split('\n').length} lines (at most ${MAX_FILE_LINES})`,
      ...['declared', 'arrow', 'expressed', 'method'].map((name) => `example.tsx ${name}: ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`),
    ]);
    const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `void ${i};`).join('\n')}\n`;
    expect(measure('example.ts', lines(MAX_FILE_LINES))).toEqual([]);
    expect(measure('example.ts', lines(MAX_FILE_LINES + 1)).map(said)).toEqual([`example.ts: ${MAX_FILE_LINES + 1} lines (at most ${MAX_FILE_LINES})`]);
  });
});
