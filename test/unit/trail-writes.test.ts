import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as ts from 'typescript';

/*
 * The audit trail has one door per kind of writer (docs/audit.md): every command Bosun runs goes
 * through the command recorder (src/domain/audit/commands.ts), every decision Bosun makes by itself
 * through src/domain/audit/system-decisions.ts, and nobody drops a write to it. Checked on the code as
 * written, so a command recorded beside the recorder, or a trail write silenced with
 * `.catch(() => undefined)`, fails here.
 */

const ROOT = path.resolve(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return rel === 'src/console' ? [] : sources(rel);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [rel] : [];
  });
}

const FILES = [...sources('src'), ...sources('activities'), ...sources('workflows')].map((file) => {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return { file, text, source: ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true) };
});

const RECORDER = 'src/domain/audit/commands.ts';

/** The outbox's writes (src/domain/audit/pending-entries.ts), and who may make them: each kind of entry's one writer. */
const OUTBOX_WRITES = ['recordIntent', 'recordOutcome', 'recordAuditEvent'];
const OUTBOX_WRITERS = [
  RECORDER, // every command Bosun runs
  'src/domain/audit/system-decisions.ts', // what Bosun decides by itself
  'src/api/audit/recorder.ts', // every write of the API
  'src/api/session/audit.ts', // console sign-ins
  'src/api/mcp/routes.ts', // an agent's tool calls
  'src/api/schedules/ticks.ts', // a schedule's tick
  'src/worker/reconcile.ts', // runs failed at start-up
  'src/api/config/apply.ts', // each object an apply of definitions changed, in its transaction
  'src/api/config/source-sync.ts', // a sync source's apply (no request: the worker's)
];

/** What the command recorder lets others use: the recorder and running through it, never an entry's write itself. */
const RECORDER_API = ['commandRecorder', 'runRecorded', 'exitOutcome', 'isTrailFailure', 'sshBestEffort', 'redactedCommand'];

/** Calls that write to the trail, directly or by running a recorded command. */
const TRAIL_WRITES = new Set([
  ...OUTBOX_WRITES,
  'recordSystemDecision',
  'recordRunDecision',
  'commandStarting',
  'commandEnded',
  'runRecorded',
  'execRecorded',
  'killProcessGroup',
  'captureOn',
  'streamOn',
  'stopLeftoverCommands',
  // A recorded command's entry and end.
  'written',
  'end',
  'settle',
]);

const calledName = (call: ts.CallExpression) =>
  ts.isIdentifier(call.expression) ? call.expression.text : ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : null;

/** Whether `node` writes to the trail: it calls a trail write, or a function of its file that does, or is a variable holding one. */
function writesTrail(node: ts.Node, bindings: Map<string, ts.Node>, seen = new Set<string>()): boolean {
  let found = false;
  const visit = (n: ts.Node) => {
    if (found) return;
    if (ts.isCallExpression(n) && TRAIL_WRITES.has(calledName(n) ?? '')) found = true;
    else if (ts.isIdentifier(n) && bindings.has(n.text) && !seen.has(n.text)) {
      seen.add(n.text);
      found = writesTrail(bindings.get(n.text)!, bindings, seen);
    }
    if (!found) ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/** A handler that ends a failure without a word: `() => undefined`, `() => {}`, `() => null`, `() => void 0`. */
function silent(handler: ts.Expression): boolean {
  if (!ts.isArrowFunction(handler) && !ts.isFunctionExpression(handler)) return false;
  const body = handler.body;
  if (ts.isBlock(body)) return body.statements.length === 0;
  return (ts.isIdentifier(body) && body.text === 'undefined') || body.kind === ts.SyntaxKind.NullKeyword || ts.isVoidExpression(body);
}

/** A handler that ends a failure (it never throws it on): whatever it does besides, the failure is gone. */
const ends = (handler: ts.Expression) => (ts.isArrowFunction(handler) || ts.isFunctionExpression(handler)) && !/\bthrow\b|Promise\.reject/.test(handler.getText());

/** `.catch(handler)` calls on a trail write in a file, as "file:line  code" lines, for handlers `judged` a drop. */
function droppedWrites(judged: (handler: ts.Expression) => boolean, files = FILES): string[] {
  const found: string[] = [];
  for (const { file, source } of files) {
    const bindings = new Map<string, ts.Node>();
    const collect = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) bindings.set(n.name.text, n.initializer);
      ts.forEachChild(n, collect);
    };
    collect(source);
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'catch' && n.arguments[0]) {
        if (judged(n.arguments[0]) && writesTrail(n.expression.expression, bindings)) {
          found.push(`${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}  ${n.getText().split('\n')[0]!.slice(0, 120)}`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(source);
  }
  return found;
}

describe('the audit trail: one door, and no write dropped', () => {
  test('only each kind of entry’s one writer writes the trail’s outbox; the activities write none themselves', () => {
    const calls = FILES.filter(({ file }) => file !== 'src/domain/audit/pending-entries.ts' && !OUTBOX_WRITERS.includes(file)).flatMap(({ file, text }) =>
      OUTBOX_WRITES.filter((name) => new RegExp(`\\b${name}\\(`).test(text)).map((name) => `${file} → ${name}`),
    );
    expect(calls).toEqual([]);
    expect(FILES.filter(({ file, text }) => file !== 'src/domain/audit/pending-entries.ts' && /\bAuditPendingModel\b/.test(text)).map(({ file }) => file)).toEqual(['src/domain/audit/model.ts']);
  });

  test('every command goes through the recorder: nobody else writes a command’s entry or its end', () => {
    const beside = FILES.filter(({ file }) => file !== RECORDER).flatMap(({ file, text }) => {
      const imported = [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[^']*audit\/commands'/g)].flatMap((m) => m[1]!.split(','));
      const names = imported.map((name) => name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!).filter(Boolean);
      const values = names.filter((name) => !/^[A-Z]/.test(name) && !RECORDER_API.includes(name));
      return [...values.map((name) => `${file} imports ${name}`), ...(/action:\s*'command\.run'/.test(text) ? [`${file} writes a command.run entry`] : [])];
    });
    expect(beside).toEqual([]);
  });

  test('no trail write is silenced: no `.catch(() => undefined)` (or `{}`, `null`, `void 0`) on one, directly or through a variable', () => {
    expect(droppedWrites(silent)).toEqual([]);
  });

  test('where commands run (activities, SSH), a command’s trail write is never caught without being thrown on', () => {
    const commandCode = FILES.filter(({ file }) => file.startsWith('activities/') || file.startsWith('src/domain/ssh/'));
    expect(droppedWrites(ends, commandCode)).toEqual([]);
  });

  test('the checks see what they check: a silenced write, a logged one and a deferred one', () => {
    const check = (code: string, judged = silent) => {
      const source = ts.createSourceFile('probe.ts', code, ts.ScriptTarget.Latest, true);
      return droppedWrites(judged, [{ file: 'probe.ts', text: code, source }]).length;
    };
    expect(check('void commandEnded(id, "ok").catch(() => undefined);')).toBe(1);
    expect(check('const intent = () => recordIntent(x); const sent = intent(); sent.catch(() => {});')).toBe(1);
    expect(check('killProcessGroup(ssh, 1, 1, record).catch(() => null);')).toBe(1);
    expect(check('entry.end("ok").catch((err) => log.warn(err));', ends)).toBe(1);
    expect(check('entry.end("ok").catch((err) => { if (isTrailFailure(err)) throw err; });', ends)).toBe(0);
    expect(check('stepLog.write((s) => s.finish()).catch(() => undefined);')).toBe(0);
  });
});
