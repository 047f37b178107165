import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/*
 * The direction of dependencies (docs/development.md): entry points → compose → api | worker →
 * domain → its contracts (src/domain/contracts, the lowest layer); activities use the domain;
 * workflows use only their own files, Temporal's workflow API, the contracts and activity types;
 * inside src/api and src/domain, folders stand in floors. Checked on the imports as written, so a change that breaks it fails here.
 */

const ROOT = path.resolve(__dirname, '..', '..');

interface Import {
  from: string;
  /** The imported file, relative to the repository (null for a package). */
  to: string | null;
  spec: string;
  typeOnly: boolean;
}

function sources(dir: string, kind = /\.ts$/): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel, kind);
    return kind.test(name) && !name.endsWith('.d.ts') ? [rel] : [];
  });
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.join(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), base]) {
    try {
      if (statSync(path.join(ROOT, candidate)).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return base;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/^\s*(import|export)(\s+type)?\b[^;]*?\sfrom\s+'([^']+)'|^\s*import\s+'([^']+)'|\b(?:import|require)\(\s*'([^']+)'\s*\)/gms)) {
    const spec = m[3] ?? m[4] ?? m[5]!;
    found.push({ from: file, to: resolve(file, spec), spec, typeOnly: Boolean(m[2]) });
  }
  return found;
}

const ALL = [...sources('src'), ...sources('activities'), ...sources('workflows')];
const IMPORTS = ALL.flatMap(importsOf);
/** With the console's .tsx files. */
const EVERY = [...ALL, ...sources('src', /\.tsx$/)];
const EVERY_IMPORTS = EVERY.flatMap(importsOf);

const under = (dir: string) => (file: string | null) => file !== null && (file === dir || file.startsWith(`${dir}/`));

/** Imports from files under `from` of files under any of `forbidden`, as "from → to" lines. */
function crossings(from: string, forbidden: string[]): string[] {
  return IMPORTS.filter((i) => under(from)(i.from) && forbidden.some((f) => under(f)(i.to))).map((i) => `${i.from} → ${i.to}`);
}

const ENTRY = ['src/main.ts', 'src/compose.ts', 'src/roles', 'src/cli', 'src/embedded'];

function link(graph: Map<string, Set<string>>, from: string, to: string) {
  graph.set(from, (graph.get(from) ?? new Set()).add(to));
}

/** The loops of a graph of imports, each as "a → b → a" (one per loop a walk meets). */
function circles(graph: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, trail: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      found.push([...trail.slice(trail.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  return found;
}

describe('the layout: dependencies point one way', () => {
  test('the shared domain uses neither process, the activities, the workflows nor the entry points', () => {
    expect(crossings('src/domain', ['src/api', 'src/worker', 'activities', 'workflows', ...ENTRY])).toEqual([]);
  });

  test('the contracts are the lowest layer: they use only each other and Temporal’s common types', () => {
    const allowed = (i: Import) => i.spec.startsWith('@temporalio/common') || under('src/domain/contracts')(i.to);
    expect(IMPORTS.filter((i) => under('src/domain/contracts')(i.from) && !allowed(i)).map((i) => `${i.from} → ${i.spec}`)).toEqual([]);
  });

  test('no process, domain file or activity imports a workflow (the worker bundles them by path)', () => {
    expect(crossings('src', ['workflows'])).toEqual([]);
    expect(crossings('activities', ['workflows'])).toEqual([]);
  });

  test('the API does not use the worker side, nor the worker the API', () => {
    expect(crossings('src/api', ['src/worker', 'activities', ...ENTRY])).toEqual([]);
    expect(crossings('src/worker', ['src/api', ...ENTRY])).toEqual([]);
  });

  test('activities use the shared domain only', () => {
    expect(crossings('activities', ['src/api', 'src/worker', ...ENTRY])).toEqual([]);
  });

  test('workflows use Temporal’s workflow API, their own files, the contracts, and activity types only', () => {
    const allowed = (i: Import) =>
      i.spec.startsWith('@temporalio/workflow') ||
      i.spec.startsWith('@temporalio/common') ||
      under('workflows')(i.to) ||
      under('src/domain/contracts')(i.to) ||
      (i.typeOnly && under('activities')(i.to));
    expect(IMPORTS.filter((i) => under('workflows')(i.from) && !allowed(i)).map((i) => `${i.from} → ${i.spec}`)).toEqual([]);
  });

  test('no two files import each other, directly or through others', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of IMPORTS) if (!i.typeOnly && i.to && ALL.includes(i.to)) link(graph, i.from, i.to);
    expect(circles(graph)).toEqual([]);
  });

  test('inside src/ and activities/ not even an import of types closes a circle of files', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of EVERY_IMPORTS) if ((under('src')(i.from) || under('activities')(i.from)) && i.to && EVERY.includes(i.to)) link(graph, i.from, i.to);
    expect(circles(graph)).toEqual([]);
  });

  test.each(['src/api', 'src/domain'])('inside %s every folder stands above what it imports: none imports one that imports it back', (dir) => {
    // A room: a folder (or a file) right under dir. An arrow between two rooms is named by one of its imports.
    const room = (file: string) => file.slice(dir.length + 1).replace(/\/.*$/, '/');
    const graph = new Map<string, Set<string>>();
    const example = new Map<string, string>();
    for (const i of EVERY_IMPORTS) {
      if (!under(dir)(i.from) || !under(dir)(i.to) || room(i.from) === room(i.to!)) continue;
      link(graph, room(i.from), room(i.to!));
      example.set(`${room(i.from)} ${room(i.to!)}`, `${i.from} → ${i.to}`);
    }
    const named = (loop: string) => loop.split(' → ').map((r, k, all) => (k + 1 < all.length ? `${r} (${example.get(`${r} ${all[k + 1]}`)})` : r)).join(' → ');
    expect(circles(graph).map(named)).toEqual([]);
  });

  test('the check sees what it checks: a file of each kind has the imports it is known to have', () => {
    const of = (file: string) => IMPORTS.filter((i) => i.from === file).map((i) => i.to ?? i.spec);
    expect(of('src/compose.ts')).toEqual(expect.arrayContaining(['src/roles/api.ts', 'src/roles/worker.ts', 'src/domain/database-connection.ts']));
    expect(of('src/roles/api.ts')).toEqual(expect.arrayContaining(['src/api/app.ts']));
    expect(of('src/roles/worker.ts')).toEqual(expect.arrayContaining(['src/worker/temporal-worker.ts']));
    expect(of('workflows/run-steps.ts')).toEqual(expect.arrayContaining(['@temporalio/workflow', 'activities/deployment-steps.ts', 'src/domain/contracts/runs.ts']));
    expect(IMPORTS.find((i) => i.from === 'workflows/run-steps.ts' && i.to === 'activities/deployment-steps.ts')?.typeOnly).toBe(true);
    expect(EVERY_IMPORTS.filter((i) => i.from === 'src/console/app/main.tsx').map((i) => i.to)).toEqual(expect.arrayContaining(['src/console/app/pages/servers.tsx']));
  });
});

/*
 * One judge (docs/security.md): every "may this identity do this on these things" is a question of
 * the gate (src/api/access/), answered from the grants src/domain/access/ defines. No other file
 * imports the grants, asks a token's scopes, reads an identity's grants or writes a refusal of its own.
 */
const JUDGE = ['src/api/access', 'src/domain/access'];
const judges = (file: string) => JUDGE.some((dir) => under(dir)(file));
const TEXTS = new Map(EVERY.map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));
/** Files outside the gate where `pattern` occurs, but for those `allowed` names (each with why). */
const outsideTheGate = (pattern: RegExp, allowed: Record<string, string> = {}) =>
  EVERY.filter((file) => !judges(file) && !(file in allowed) && pattern.test(TEXTS.get(file)!));

describe('one judge: who may do what is asked of the gate alone', () => {
  test('no file outside the gate imports the grants (naming their types judges nothing)', () => {
    const grants = EVERY.flatMap(importsOf).filter((i) => i.to === 'src/domain/access/grants.ts' && !i.typeOnly);
    expect(grants.filter((i) => !judges(i.from)).map((i) => `${i.from} → ${i.to}`)).toEqual([]);
  });

  test('no file outside the gate asks what a token’s scopes allow', () => {
    expect(outsideTheGate(/\bhasScope\b/)).toEqual([]);
  });

  test('no file outside the gate reads an identity’s grants', () => {
    expect(outsideTheGate(/\.grants\b/, { 'src/domain/tokens/service.ts': 'builds the principal: hands its identity’s grants to the gate, judges nothing' })).toEqual([]);
  });

  test('no file outside the gate writes a refusal of its own (403 forbidden or people_only)', () => {
    const allowed = { 'src/api/http/auth.ts': 'a console write without its anti-forgery token is a forged request, not a question of rights' };
    expect(outsideTheGate(/\bApiError\(\s*'(forbidden|people_only)'/, allowed)).toEqual([]);
  });

  test('the gate refuses through one function (refusals.ts), so every refusal has one shape', () => {
    const gate = EVERY.filter(under('src/api/access/gate'));
    expect(gate.filter((file) => /\bnew ApiError\(|\bnotFound\(/.test(TEXTS.get(file)!))).toEqual(['src/api/access/gate/refusals.ts']);
  });

  test('the check sees what it checks: the gate imports the grants and asks the scopes, and the console is read too', () => {
    const gate = EVERY.filter(under('src/api/access/gate'));
    expect(gate.flatMap(importsOf).filter((i) => i.to === 'src/domain/access/grants.ts' && !i.typeOnly).length).toBeGreaterThan(0);
    expect(gate.filter((file) => /\bhasScope\b/.test(TEXTS.get(file)!))).not.toEqual([]);
    expect(EVERY).toEqual(expect.arrayContaining(['src/console/app/main.tsx', 'src/domain/tokens/service.ts']));
  });
});
