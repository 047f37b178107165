import {
  CONFIG_DOCUMENT_LIMIT,
  CONFIG_FILE_LIMIT_BYTES,
  ConfigLimitError,
  formatConfigFiles,
  formatProblem,
  parseConfigFiles,
  secretReferences,
  specPathText,
} from '../../src/domain/config/files';
import type { ConfigFile } from '../../src/domain/config/types';

/*
 * Config files (issue 38) as a plan reads them and the export writes them: a pure module, so its
 * functions are its public surface. Every problem is asserted as a person reads it, file:line:column.
 */

/** Milliseconds of this process's CPU that `work` took: unlike the wall clock, not stretched by a loaded machine. */
function cpuMs<T>(work: () => T): { result: T; ms: number } {
  const before = process.cpuUsage();
  const result = work();
  const { user, system } = process.cpuUsage(before);
  return { result, ms: (user + system) / 1000 };
}

const problemsOf = (...files: ConfigFile[]) => parseConfigFiles(files).problems.map(formatProblem);
const file = (path: string, ...lines: string[]): ConfigFile => ({ path, content: `${lines.join('\n')}\n` });

const WEB = file(
  'deploy/web.yaml',
  '# the web tier', //            1
  'kind: Deployment', //          2
  'name: web-release', //         3
  'spec:', //                     4
  '  targets:', //                5
  '    servers: [web-1, web-2]', // 6
  '  steps:', //                  7
  '    - name: build', //         8
  '      command: make', //       9
  '    - name: ship', //          10
  '      command: |', //          11
  '        rsync -a dist/ /srv/', // 12
  '        systemctl reload web', // 13
  '      timeout_seconds: 90', // 14
);

describe('reading config files', () => {
  test('documents come back as kind, name and plain JSON spec, with where they begin; empty documents and comments are skipped', () => {
    const team = file('teams/ops.yaml', '---', '# nothing here', '---', 'kind: Team', 'name: ops', 'spec: {description: "On call", members: []}', '---', '');
    const { documents, problems } = parseConfigFiles([WEB, team]);
    expect(problems).toEqual([]);
    expect(documents.map((d) => [d.kind, d.name, d.file, d.at])).toEqual([
      ['Deployment', 'web-release', 'deploy/web.yaml', { file: 'deploy/web.yaml', line: 2, column: 1 }],
      ['Team', 'ops', 'teams/ops.yaml', { file: 'teams/ops.yaml', line: 4, column: 1 }],
    ]);
    expect(documents[0]!.spec).toEqual({
      targets: { servers: ['web-1', 'web-2'] },
      steps: [
        { name: 'build', command: 'make' },
        { name: 'ship', command: 'rsync -a dist/ /srv/\nsystemctl reload web\n', timeout_seconds: 90 },
      ],
    });
    expect(documents[1]!.spec).toEqual({ description: 'On call', members: [] });
  });

  test('a spec path is found at its key, a list item at the item, a missing part at its nearest ancestor, [] at spec’s value', () => {
    const [web] = parseConfigFiles([WEB]).documents;
    const at = (path: Array<string | number>) => { const p = web!.positionOf(path); return `${p.file}:${p.line}:${p.column}`; };
    expect(at(['steps', 1, 'timeout_seconds'])).toBe('deploy/web.yaml:14:7');
    expect(at(['steps', 1])).toBe('deploy/web.yaml:10:7');
    expect(at(['targets', 'servers', 1])).toBe('deploy/web.yaml:6:22');
    expect(at(['steps', 1, 'retries'])).toBe('deploy/web.yaml:10:7');
    expect(at(['steps', 7, 'name'])).toBe('deploy/web.yaml:7:3');
    expect(at(['health_check'])).toBe('deploy/web.yaml:5:3');
    expect(at([])).toBe('deploy/web.yaml:5:3');
  });

  test('aliases are allowed, and a position through one is its anchor’s', () => {
    const { documents, problems } = parseConfigFiles([
      file('a.yaml', 'kind: Deployment', 'name: api', 'spec:', '  targets: &fleet', '    tags: [api]', '  again: *fleet'),
    ]);
    expect(problems).toEqual([]);
    expect(documents[0]!.spec).toEqual({ targets: { tags: ['api'] }, again: { tags: ['api'] } });
    expect(documents[0]!.positionOf(['again', 'tags'])).toEqual({ file: 'a.yaml', line: 5, column: 5 });
  });

  test('a YAML syntax error is yaml’s own message at its place; the other documents and files are still read', () => {
    expect(problemsOf(file('bad.yaml', 'kind: Team', 'name: ops', 'spec:', '  members: [ada, bob', 'x: 1'), file('quote.yaml', 'kind: Team', 'name: "ops'))).toEqual([
      'bad.yaml:5:1: Flow sequence in block collection must be sufficiently indented and end with a ]',
      'quote.yaml:3:1: Missing closing "quote',
    ]);
    const { documents } = parseConfigFiles([file('two.yaml', 'kind: Team', 'name: ops', 'spec: {}', '---', 'kind: Team', 'name: [', '---', 'kind: Team', 'name: dev', 'spec: {}')]);
    expect(documents.map((d) => d.name)).toEqual(['ops', 'dev']);
  });

  test('a duplicate key names both lines', () => {
    expect(problemsOf(file('d.yaml', 'kind: Deployment', 'name: web', 'spec:', '  steps: []', '  targets: {tags: [web]}', '  steps: []'))).toEqual([
      'd.yaml:6:3: duplicate key "steps" (first at line 4)',
    ]);
    expect(problemsOf(file('top.yaml', 'kind: Team', 'name: a', 'name: b', 'spec: {}'))).toEqual(['top.yaml:3:1: duplicate key "name" (first at line 2)']);
  });

  test('the shape of a document: a mapping of exactly kind, name and spec, with a known kind and a readable name', () => {
    const doc = (...lines: string[]) => problemsOf(file('s.yaml', ...lines));
    expect(doc('- kind: Team')).toEqual(['s.yaml:1:1: a document must be a mapping of kind, name and spec']);
    expect(doc('kind: Team', 'name: ops', 'metadata: {}', 'spec: {}')).toEqual(['s.yaml:3:1: unknown key "metadata": a document has kind, name and spec only']);
    expect(doc('kind: Team', 'name: ops')).toEqual(['s.yaml:1:1: spec is missing: a document has kind, name and spec']);
    expect(doc('kind: Team', 'name: ops', 'spec: [a]')).toEqual(['s.yaml:3:7: spec must be a mapping']);
    expect(doc('kind: Team', 'name: ops', 'spec:')).toEqual(['s.yaml:3:1: spec must be a mapping']);
    expect(doc('kind: Deploy', 'name: ops', 'spec: {}')).toEqual([
      's.yaml:1:7: kind "Deploy" is not one of Deployment, Pipeline, Schedule, Freeze, Team, ServiceAccount, RoleBinding, NotificationChannel, Policy',
    ]);
    expect(doc('kind: 3', 'name: ops', 'spec: {}')).toEqual([expect.stringMatching(/^s\.yaml:1:7: kind is not one of Deployment, /)]);
    expect(doc('kind: Team', 'name: ""', 'spec: {}')).toEqual(['s.yaml:2:7: name must not be empty']);
    expect(doc('kind: Team', 'name: 42', 'spec: {}')).toEqual(['s.yaml:2:7: name must be a string']);
    expect(doc('kind: Team', `name: ${'n'.repeat(129)}`, 'spec: {}')).toEqual(['s.yaml:2:7: name must be at most 128 characters']);
    expect(doc('kind: Team', `name: ${'😀'.repeat(128)}`, 'spec: {}')).toEqual([]);
    expect(doc('kind: Team', 'name: "a\\tb"', 'spec: {}')).toEqual(['s.yaml:2:7: name must not contain control characters']);
    expect(doc('kind: Team', 'name: " ops"', 'spec: {}')).toEqual(['s.yaml:2:7: name must not begin or end with spaces']);
  });

  test('every problem of a document at once, with its kind and name when known; the document is left out', () => {
    const { documents, problems } = parseConfigFiles([file('m.yaml', 'kind: Team', 'name: ops', 'extra: 1', 'spec:', '  a: .inf', '  a: 2')]);
    expect(documents).toEqual([]);
    expect(problems).toEqual([
      { file: 'm.yaml', line: 3, column: 1, kind: 'Team', name: 'ops', message: 'unknown key "extra": a document has kind, name and spec only' },
      { file: 'm.yaml', line: 5, column: 6, kind: 'Team', name: 'ops', message: 'a number must be finite (.inf and .nan are not JSON)' },
      { file: 'm.yaml', line: 6, column: 3, kind: 'Team', name: 'ops', message: 'duplicate key "a" (first at line 5)' },
    ]);
  });

  test('values are plain JSON under string keys; tags other than the core schema’s are refused', () => {
    expect(
      problemsOf(
        file('v.yaml', 'kind: Team', 'name: ops', 'spec:', '  1: one', '  ? [a]', '  : list', '  null: x', '  blob: !!binary aGk=', '  mine: !thing x', '  when: !!timestamp 2026-01-01', '  nan: .nan'),
      ),
    ).toEqual([
      'v.yaml:4:3: a key must be a string (quote it)',
      'v.yaml:5:5: a key must be a string (quote it)',
      'v.yaml:7:3: a key must be a string (quote it)',
"v.yaml:8:18: tag !!binary is refused: only the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
      "v.yaml:9:16: tag !thing is refused: only the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
      "v.yaml:10:21: tag !!timestamp is refused: only the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
      'v.yaml:11:8: a number must be finite (.inf and .nan are not JSON)',
    ]);
    const { documents } = parseConfigFiles([file('ok.yaml', 'kind: Team', 'name: ops', 'spec:', '  a: !!str 12', '  b: !!int "7"', '  "1": yes', '  c: 0x1F', '  d: ~')]);
    expect(documents[0]!.spec).toEqual({ a: '12', b: 7, '1': 'yes', c: 31, d: null });
  });

  test('two documents of the same kind and name, in one file or across files: a problem at the second naming the first', () => {
    const a = file('deploy/a.yaml', '# first', '', 'kind: Deployment', 'name: web', 'spec: {}', '---', 'kind: Team', 'name: web', 'spec: {}');
    const b = file('deploy/b.yaml', 'kind: Deployment', 'name: api', 'spec: {}', '---', 'kind: Deployment', 'name: web', 'spec: {steps: []}');
    const { documents, problems } = parseConfigFiles([a, b]);
    expect(problems.map(formatProblem)).toEqual(['deploy/b.yaml:5:1: Deployment "web" is defined twice (first at deploy/a.yaml:3:1)']);
    expect(problems[0]).toMatchObject({ kind: 'Deployment', name: 'web' });
    expect(documents.map((d) => `${d.kind}/${d.name}@${d.file}`)).toEqual(['Deployment/web@deploy/a.yaml', 'Team/web@deploy/a.yaml', 'Deployment/api@deploy/b.yaml']);
  });
});

describe('aliases that would expand without end', () => {
  test('a billion laughs is refused at once, never expanded', () => {
    const lines = ['kind: Team', 'name: lol', 'spec:', '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [i, anchor] of [...'bcdefghi'].entries()) lines.push(`  ${anchor}: &${anchor} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(',')}]`);
    const { result, ms } = cpuMs(() => problemsOf(file('lol.yaml', ...lines)));
    expect(result).toEqual(['lol.yaml:9:10: aliases expand this document past 100000 values: refused as an alias bomb']);
    expect(ms).toBeLessThan(1_000);
  });

  test('one large anchor used many times is refused the same way; yaml’s own bound refuses a small one used over 100 times', () => {
    const large = ['kind: Team', 'name: big', 'spec:', `  a: &a [${Array(2_000).fill('x').join(',')}]`, `  b: [${Array(60).fill('*a').join(', ')}]`];
    expect(problemsOf(file('big.yaml', ...large))).toEqual(['big.yaml:5:203: aliases expand this document past 100000 values: refused as an alias bomb']);
    const often = ['kind: Team', 'name: often', 'spec:', '  a: &a [1, 2]', `  b: [${Array(101).fill('*a').join(', ')}]`];
    expect(problemsOf(file('often.yaml', ...often))).toEqual([
      "often.yaml:5:7: aliases are used more than yaml's bound of 100 allows (Excessive alias count indicates a resource exhaustion attack): refused as an alias bomb",
    ]);
  });

  test('an alias inside its own anchor, or of an anchor not yet written, is refused', () => {
    expect(problemsOf(file('c.yaml', 'kind: Team', 'name: loop', 'spec:', '  a: &a [1, *a]', '  b: *later', '  c: &later 1'))).toEqual([
      'c.yaml:4:13: alias *a is inside its own anchor: a cycle is refused',
      'c.yaml:5:6: no anchor &later before this alias',
    ]);
  });
});

describe('limits', () => {
  test('a file over 5 MiB is refused (413) before any file is parsed, naming the file and the limit', () => {
    const huge = { path: 'big/huge.yaml', content: `# ${'x'.repeat(CONFIG_FILE_LIMIT_BYTES - 2)}` };
    expect(parseConfigFiles([huge]).problems).toEqual([]);
    const over = { path: 'big/huge.yaml', content: `${huge.content}é` };
    const error = (() => {
      try {
        parseConfigFiles([file('broken.yaml', 'a: ['), over]);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConfigLimitError);
    expect(error).toMatchObject({ status: 413, message: 'big/huge.yaml is over 5 MiB, the limit of a config file' });
  });

  test(`${CONFIG_DOCUMENT_LIMIT} documents are read quickly; one more is a problem naming the limit`, () => {
    const documents = (count: number, from = 0) =>
      Array.from({ length: count }, (_, i) => `kind: Team\nname: team-${from + i}\nspec:\n  description: team ${from + i}\n  members: [ada@example.com, bob@example.com]\n`).join('---\n');
    const { result: read, ms } = cpuMs(() => parseConfigFiles([{ path: 'a.yaml', content: documents(1_000) }, { path: 'b.yaml', content: documents(1_000, 1_000) }]));
    expect(read.problems).toEqual([]);
    expect(read.documents).toHaveLength(CONFIG_DOCUMENT_LIMIT);
    // About 0.15 s of CPU here.
    expect(ms).toBeLessThan(5_000);
    const over = parseConfigFiles([{ path: 'a.yaml', content: documents(1_000) }, { path: 'b.yaml', content: `# more\n${documents(1_001, 1_000)}` }]);
    expect(over.problems.map(formatProblem)).toEqual([`b.yaml:${2 + 6 * 1_000}:1: more than 2000 documents in all (at most 2000)`]);
  });

  test('reading stops at the document limit: 5 MiB of tiny documents is not parsed to the end', () => {
    const tiny = 'kind: Team\nname: t\nspec: {}\n---\n';
    const content = tiny.repeat(Math.floor(CONFIG_FILE_LIMIT_BYTES / tiny.length));
    const { result, ms } = cpuMs(() => parseConfigFiles([{ path: 'tiny.yaml', content }]));
    expect(result.problems.at(-1)).toMatchObject({ file: 'tiny.yaml', line: 4 * 2_000 + 1, column: 1, message: 'more than 2000 documents in all (at most 2000)' });
    // Parsing all 170,000 documents before stopping took 4.7 s of CPU (17 s on the clock); now about what 2,000 take (0.15 s).
    expect(ms).toBeLessThan(3_000);
  });

  test('[ and { nested past 100 levels are refused where they pass it, without parsing the rest (5 MiB of them took 38 s)', () => {
    const nested = (depth: number) => file('deep.yaml', 'kind: Team', 'name: deep', 'spec:', `  a: ${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(problemsOf(nested(100))).toEqual([]);
    expect(problemsOf(nested(101))).toEqual(['deep.yaml:4:106: [ and { nested deeper than 100 levels: the rest of the file is not read']);
    const { result, ms } = cpuMs(() => problemsOf({ path: 'deep.yaml', content: `a: ${'{"x": ['.repeat(600_000)}` }));
    expect(result).toEqual(['deep.yaml:1:354: [ and { nested deeper than 100 levels: the rest of the file is not read']);
    expect(ms).toBeLessThan(1_000);
  });

  test('a file’s path must be relative, /-separated, without .. and at most 512 characters', () => {
    const rule = "a file's path must be relative, /-separated, without empty or .. parts, at most 512 characters";
    const paths = ['/etc/bosun.yaml', '../outside.yaml', 'deploy/../../x.yaml', 'deploy\\web.yaml', 'deploy//web.yaml', '', `${'d/'.repeat(256)}x.yaml`];
    expect(problemsOf(...paths.map((path) => file(path, 'kind: Team', 'name: ops', 'spec: {}')))).toEqual(paths.map((path) => `${path.slice(0, 512)}:1:1: ${rule}`));
    expect(problemsOf(file('twice.yaml', 'kind: Team', 'name: a', 'spec: {}'), file('twice.yaml', 'kind: Team', 'name: b', 'spec: {}'))).toEqual(['twice.yaml:1:1: this file is given twice']);
    expect(problemsOf(file(`${'d'.repeat(507)}.yaml`, 'kind: Team', 'name: ops', 'spec: {}'), file('./teams/ops.yaml', 'kind: Team', 'name: dev', 'spec: {}'))).toEqual([]);
  });
});

describe('paths, problems and secret references as messages write them', () => {
  test('specPathText and formatProblem', () => {
    expect(specPathText(['steps', 2, 'timeout_seconds'])).toBe('steps[2].timeout_seconds');
    expect(specPathText(['targets', 'servers', 1])).toBe('targets.servers[1]');
    expect(specPathText(['labels', 'a.b', 'x y'])).toBe('labels["a.b"]["x y"]');
    expect(specPathText([])).toBe('spec');
    expect(formatProblem({ file: 'deploy/web.yaml', line: 14, column: 7, kind: 'Deployment', name: 'web', message: 'steps[2].timeout_seconds must be at most 86400' })).toBe(
      'deploy/web.yaml:14:7: steps[2].timeout_seconds must be at most 86400',
    );
  });

  test('every ${secret:NAME} in string values, malformed ones flagged', () => {
    const spec = {
      url: '${secret:SLACK_URL}',
      steps: [{ command: 'curl -H "Bearer ${secret:API_TOKEN}" ${secret:HOOK_2}' }, { command: 'echo ${secret:} ${secret:bad-name} $HOME' }],
      headers: { Authorization: 'token ${secret:GH' },
      plain: 'no ${ secret:X } here',
    };
    expect(secretReferences(spec)).toEqual([
      { name: 'SLACK_URL', path: ['url'], malformed: false },
      { name: 'API_TOKEN', path: ['steps', 0, 'command'], malformed: false },
      { name: 'HOOK_2', path: ['steps', 0, 'command'], malformed: false },
      { name: '', path: ['steps', 1, 'command'], malformed: true },
      { name: 'bad-name', path: ['steps', 1, 'command'], malformed: true },
      { name: 'GH', path: ['headers', 'Authorization'], malformed: true },
    ]);
  });
});

describe('the export’s files', () => {
  const TRICKY = [
    ' leading space', 'trailing space ', 'a # not a comment', 'key: value', 'yes', 'no', 'on', 'off', 'y', 'true', 'null', '~', '12', '1e3', '0x1F', '0o17', '.inf',
    'é✓ 😀 ｆ', '', 'a\tb', '\ttab first', 'line 1\nline 2\n', 'line 1\nline 2', 'kept\n\n\n', '  indented first\nnext\n', '\nblank first', ' \n', '\n \n\n',
    'carriage\r\nreturn\n', '- dash', '---', '...', 'a\n---\nb\n', '@at', '`tick', '%pct', '!bang', '*star', '&amp', '? q', '{x}', '[x]', '"double"', "'single'",
    '${secret:SLACK_URL}', 'bell\u0007', 'line\u2028separator\n',
  ];
  const objects = [
    { kind: 'Team' as const, name: 'ops', spec: { description: 'On call', members: ['ada@example.com'] } },
    {
      kind: 'Deployment' as const,
      name: 'web-release',
      spec: {
        targets: { servers: ['web-1'], tags: [] },
        steps: [{ name: 'ship', command: 'set -e\nmake\nrsync -a dist/ /srv/\n', timeout_seconds: 600, retries: 0, continue_on_error: false }],
        strategy: {},
        notes: null,
      },
    },
    { kind: 'Deployment' as const, name: 'api', spec: { values: TRICKY, keyed: Object.fromEntries(TRICKY.map((t, i) => [t, i])) } },
    { kind: 'Policy' as const, name: 'default', spec: { allow: ['systemctl *'], deny: [] } },
  ];

  test('one file per kind, documents by name, kind/name/spec in that order under a header; commands as block literals', () => {
    const files = formatConfigFiles(objects);
    expect(files.map((f) => f.path)).toEqual(['deployments.yaml', 'teams.yaml', 'policy.yaml']);
    expect(files[1]!.content).toBe(
      ['# Team definitions exported by Bosun (bosun config export)', 'kind: Team', 'name: ops', 'spec:', '  description: On call', '  members:', '    - ada@example.com', ''].join('\n'),
    );
    const deployments = files[0]!.content;
    expect(deployments.indexOf('name: api\n')).toBeLessThan(deployments.indexOf('name: web-release\n'));
    expect(deployments).toContain(
      ['---', 'kind: Deployment', 'name: web-release', 'spec:', '  targets:', '    servers:', '      - web-1', '    tags: []', '  steps:', '    - name: ship', '      command: |', '        set -e', '        make', '        rsync -a dist/ /srv/', '      timeout_seconds: 600'].join('\n'),
    );
    expect(deployments).toContain('  notes: null\n');
  });

  test('what it writes reads back to exactly the same kind, name and spec, tricky strings included', () => {
    const { documents, problems } = parseConfigFiles(formatConfigFiles(objects));
    expect(problems).toEqual([]);
    const byName = new Map(documents.map((d) => [`${d.kind}/${d.name}`, d]));
    for (const object of objects) expect(JSON.stringify(byName.get(`${object.kind}/${object.name}`)?.spec)).toBe(JSON.stringify(object.spec));
    const api = formatConfigFiles(objects)[0]!.content;
    for (const ambiguous of ['yes', 'no', 'on', 'off', 'y', 'true', 'null', '12', '0o17']) expect(api).toContain(`- "${ambiguous}"\n`);
    expect(api).toContain('- ${secret:SLACK_URL}\n');
  });

  test('a string a block literal would not read back is quoted instead; random strings all read back', () => {
    const [written] = formatConfigFiles([{ kind: 'Team', name: 'spaces', spec: { description: ' \n' } }]);
    expect(written!.content).toContain('description: "\\ \\n"\n');
    let seed = 38;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['a', ' ', '\t', '\n', '\n', '#', ':', '-', '"', "'", '|', '>', '.', '\r', '\u00a0', '\u0085', '\ufeff', '😀'];
    const strings = Array.from({ length: 2_000 }, () => Array.from({ length: 1 + Math.floor(random() * 10) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
    const { documents } = parseConfigFiles(formatConfigFiles([{ kind: 'Team', name: 'random', spec: { strings, nested: [{ deeper: strings.slice(0, 200) }] } }]));
    expect(documents[0]!.spec).toEqual({ strings, nested: [{ deeper: strings.slice(0, 200) }] });
  });

  test('the output is deterministic: the same objects in another order give the same bytes; names in code point order', () => {
    const names = ['b', 'yes', 'a', 'ｆ', '😀', '12', 'B', 'x: y', 'a-2', '#hash'];
    const shuffled = (order: string[]) => formatConfigFiles(order.map((name) => ({ kind: 'Freeze' as const, name, spec: { reason: name } })));
    const once = shuffled(names);
    expect(shuffled([...names].reverse())).toEqual(once);
    expect(parseConfigFiles(once).documents.map((d) => d.name)).toEqual(['#hash', '12', 'B', 'a', 'a-2', 'b', 'x: y', 'yes', 'ｆ', '😀']);
    expect(formatConfigFiles([])).toEqual([]);
  });
});
