import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, runCli } from '../support/processes';

/** A fresh checkout as `git clone` leaves it (no dist/), sharing this one's node_modules. */
function cloneWithoutBuild(): string {
  const checkout = mkdtempSync(path.join(os.tmpdir(), 'bosun-checkout-'));
  for (const entry of ['src', 'workflows', 'activities', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
    if (existsSync(path.join(REPO, entry))) cpSync(path.join(REPO, entry), path.join(checkout, entry), { recursive: true });
  symlinkSync(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'));
  return checkout;
}

describe('the bosun command ships as compiled JavaScript', () => {
  let checkout: string;
  const HELP = /^Usage: bosun \[options\] \[command\]\n/;

  beforeAll(() => {
    checkout = cloneWithoutBuild();
  });
  afterAll(() => rmSync(checkout, { recursive: true, force: true }));

  test('the first call compiles once (even two at a time), later calls do not, a changed source compiles again, a removed one leaves nothing behind', async () => {
    // A module a later version moves away (as src/api/access/gate.ts became gate/index.ts).
    writeFileSync(path.join(checkout, 'src/cli/leftover.ts'), 'export const leftover = 1;\n');
    const [first, second] = await Promise.all([runCli(['--help'], process.env, checkout), runCli(['--help'], process.env, checkout)]);
    for (const call of [first!, second!]) {
      expect(call.code).toBe(0);
      expect(call.stdout).toMatch(HELP);
    }
    expect([first!, second!].filter((call) => call.stderr.includes('compiling to dist/'))).toHaveLength(1);
    expect(existsSync(path.join(checkout, 'dist/src/cli/index.js'))).toBe(true);
    expect(existsSync(path.join(checkout, 'dist/src/cli/leftover.js'))).toBe(true);

    const cached = await runCli(['--help'], process.env, checkout);
    expect(cached.stdout).toMatch(HELP);
    expect(cached.stderr).toBe('');

    // A `git pull` without `npm install`: one source newer than the build, another removed, whose
    // compiled file goes with it (node would otherwise still find a module the sources no longer have).
    const now = new Date();
    utimesSync(path.join(checkout, 'src/cli/deploy.ts'), now, now);
    rmSync(path.join(checkout, 'src/cli/leftover.ts'));
    const rebuilt = await runCli(['--help'], process.env, checkout);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toMatch(HELP);
    expect(rebuilt.stderr).toContain('compiling to dist/');
    expect(existsSync(path.join(checkout, 'dist/src/cli/leftover.js'))).toBe(false);
    expect((await runCli(['--help'], process.env, checkout)).stderr).toBe('');
  }, 180_000);

  test('a source that does not compile is said, and the older build is not run in its place; fixed, it compiles again', async () => {
    expect((await runCli(['--help'], process.env, checkout)).code).toBe(0);
    const source = path.join(checkout, 'src/cli/print.ts');
    const good = readFileSync(source, 'utf8');
    writeFileSync(source, `${good}\nexport const broken = ;\n`);
    const refused = await runCli(['--help'], process.env, checkout);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('src/cli/print.ts');
    expect(refused.stderr).toContain('bosun: a source does not compile');
    // Not stamped: the next call tries again, and compiles once the source is fixed.
    expect((await runCli(['--help'], process.env, checkout)).code).toBe(3);
    writeFileSync(source, good);
    const fixed = await runCli(['--help'], process.env, checkout);
    expect([fixed.code, fixed.stderr]).toEqual([0, expect.stringContaining('compiling to dist/')]);
    expect(fixed.stdout).toMatch(HELP);
  }, 120_000);

  test('it runs with plain node: no tsx, no TypeScript source, the compiled CLI from dist/', async () => {
    expect((await runCli(['--help'], process.env, checkout)).code).toBe(0);
    // Every node process the command starts says how it was started and what it loaded.
    const trace = path.join(checkout, 'trace.jsonl');
    const preload = path.join(checkout, 'trace.js');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').appendFileSync(${JSON.stringify(trace)}, JSON.stringify({ entry: process.argv[1], execArgv: process.execArgv, loaded: Object.keys(require.cache) }) + '\\n'));`,
    );
    const traced = await runCli(['--help'], { ...process.env, NODE_OPTIONS: `--require ${preload}` }, checkout);
    expect(traced.code).toBe(0);
    expect(traced.stdout).toMatch(HELP);
    const processes = readFileSync(trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { entry: string; execArgv: string[]; loaded: string[] });
    expect(processes).toHaveLength(1);
    const [cli] = processes;
    expect(cli!.entry).toBe(path.join(checkout, 'src/cli/bin.js'));
    expect(cli!.execArgv.join(' ')).not.toMatch(/tsx/);
    expect(cli!.loaded).toContain(path.join(checkout, 'dist/src/cli/index.js'));
    expect(cli!.loaded.filter((file) => /\.ts$|node_modules\/(tsx|typescript)\//.test(file))).toEqual([]);
  }, 120_000);
});
