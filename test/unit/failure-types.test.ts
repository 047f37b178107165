import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SSH_FAILURE_TYPES, SshError, type SshErrorKind } from '../../src/domain/ssh/errors';
import { failure, FAILURE_TYPES, failureType, NON_RETRYABLE_FAILURES, rerunsElsewhere } from '../../src/domain/contracts/failure-types';

/**
 * Temporal failure types live in one table (src/domain/contracts/failure-types.ts): a type named anywhere else
 * drifts (NON_RETRYABLE_FAILURES once copied the SSH types by hand), and a renamed one breaks
 * recorded histories and people's Temporal UI queries.
 */
const root = join(__dirname, '../..');
const MODULE = 'src/domain/contracts/failure-types.ts';

function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { file: relative(root, path), text: readFileSync(path, 'utf8') };
    })
    .filter(({ file }) => file !== MODULE);
}

const code = [...sources('activities'), ...sources('workflows'), ...sources('src')];
const names = FAILURE_TYPES.map((entry) => entry.name);
/** The types a file raises: the first arguments of the table's `failure()`, under whatever name the file imports it. */
function raised(text: string): string[] {
  const imported = /import \{[^}]*\bfailure(?: as (\w+))?\b[^}]*\} from '[./a-z-]*\/failure-types'/.exec(text);
  if (!imported) return [];
  const local = imported[1] ?? 'failure';
  return [...text.matchAll(new RegExp(`\\b${local}\\(\\s*'([^']+)'`, 'g'))].map((match) => match[1]!);
}

function historyFailures(): { types: Set<string>; nonRetryable: Set<string> } {
  const types = new Set<string>();
  const nonRetryable = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    const info = record.applicationFailureInfo as { type?: string } | undefined;
    if (info?.type) types.add(info.type);
    for (const name of (record.nonRetryableErrorTypes as string[] | undefined) ?? []) nonRetryable.add(name);
    Object.values(record).forEach(walk);
  };
  const dir = join(root, 'test/histories');
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.json')) walk(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')));
  }
  return { types, nonRetryable };
}

describe('failure types', () => {
  test('names are unique, and each has a meaning a person can act on', () => {
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    for (const entry of FAILURE_TYPES) expect(entry.meaning).toMatch(/^[A-Z].{20,}\.$/);
  });

  test('no failure is built outside the table: every ApplicationFailure of activities/, workflows/ and src/ comes from failure()', () => {
    const built = code.filter(({ text }) => /ApplicationFailure\s*\.\s*(create|nonRetryable|retryable)\(|new ApplicationFailure\(/.test(text)).map(({ file }) => file);
    expect(built).toEqual([]);
    // Nor is a type's name written down elsewhere (a constant, a hand-made list): only as failure()'s first
    // argument, in the SSH kinds' typed map, or as the name of the error class it is named after.
    const quoted = new RegExp(`(.{0,12})'(${names.join('|')})'`, 'g');
    const elsewhere = code.flatMap(({ file, text }) =>
      [...text.matchAll(quoted)]
        .filter(([, before]) => !/\b(failure|failureOf)\(\s*$/.test(before!) && !/\bname = $/.test(before!) && file !== 'src/domain/ssh/errors.ts')
        .map(([match]) => `${file}: ${match}`),
    );
    expect(elsewhere).toEqual([]);
  });

  test('every type raised in activities/, workflows/ and the domain is in the table, raised where the table says', () => {
    const unknown: string[] = [];
    const seen = new Set<string>(Object.values(SSH_FAILURE_TYPES));
    for (const { file, text } of code) {
      for (const name of raised(text)) {
        seen.add(name);
        const entry = failureType(name);
        if (!entry) unknown.push(`${file}: ${name}`);
        // The shared domain's code that activities run (SSH, the run queue) raises activities' types too.
        else if (!file.startsWith(entry.raisedBy === 'activity' ? 'activities/' : 'workflows/') && !(entry.raisedBy === 'activity' && file.startsWith('src/domain/'))) unknown.push(`${file}: ${name} is raised by a ${entry.raisedBy}`);
      }
    }
    expect(unknown).toEqual([]);
    // And nothing in the table is dead.
    expect(names.filter((name) => !seen.has(name))).toEqual([]);
  });

  test('each kind of SSH error maps onto an activity type of the table, retried as the table says', () => {
    const kinds: SshErrorKind[] = ['transport', 'timeout', 'authentication', 'host_key_mismatch', 'key_invalid'];
    expect(Object.keys(SSH_FAILURE_TYPES).sort()).toEqual([...kinds].sort());
    for (const kind of kinds) {
      const entry = failureType(SSH_FAILURE_TYPES[kind]);
      expect(entry?.raisedBy).toBe('activity');
      const error = new SshError(kind, `${kind} went wrong`);
      expect(error.retryable).toBe(entry!.retryable);
      expect(error.toFailure()).toMatchObject({ type: SSH_FAILURE_TYPES[kind], message: `${kind} went wrong`, nonRetryable: !entry!.retryable });
    }
    expect(new SshError('transport', 'x').retryable).toBe(true);
    expect(new SshError('host_key_mismatch', 'x').retryable).toBe(false);
  });

  test("failure() sets the type and the table's retry flag; the retry policies' list is the non-retryable activity types", () => {
    for (const entry of FAILURE_TYPES) {
      expect(failure(entry.name, 'm', { details: [1] })).toMatchObject({ type: entry.name, message: 'm', nonRetryable: !entry.retryable, details: [1] });
    }
    expect([...NON_RETRYABLE_FAILURES].sort()).toEqual(FAILURE_TYPES.filter((e) => e.raisedBy === 'activity' && !e.retryable).map((e) => e.name).sort());
    expect(NON_RETRYABLE_FAILURES).not.toContain('SshTransportError');
    expect(NON_RETRYABLE_FAILURES).not.toContain('DeploymentRunFailed');
  });

  test('recorded histories: their failure types are still in the table, and what they recorded as non-retryable still is', () => {
    const { types, nonRetryable } = historyFailures();
    expect(types.size).toBeGreaterThan(0);
    expect(nonRetryable.size).toBeGreaterThan(0);
    expect([...types].filter((name) => !failureType(name))).toEqual([]);
    expect([...nonRetryable].filter((name) => !NON_RETRYABLE_FAILURES.includes(name))).toEqual([]);
  });

  test('a followed step lost with its worker runs again elsewhere: StepNotHeld though not retryable, a shutdown, a dropped connection, an unknown error; not what no worker can fix', () => {
    expect(failureType('StepNotHeld')?.retryable).toBe(false);
    for (const name of ['StepNotHeld', 'WorkerShutdown', 'SshTransportError', 'SshTimeout', 'MongoServerError', 'Error', undefined]) expect([name, rerunsElsewhere(name)]).toEqual([name, true]);
    // The types recorded as non-retryable in histories (what lostWithItsWorker treated as final
    // before the table) stay final, but StepNotHeld: not retryable, yet re-run elsewhere (above).
    const { nonRetryable } = historyFailures();
    expect(nonRetryable.size).toBeGreaterThan(1);
    for (const name of [...nonRetryable].filter((n) => n !== 'StepNotHeld')) expect([name, rerunsElsewhere(name)]).toEqual([name, false]);
  });
});
