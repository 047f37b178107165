import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inProcessGroup, processGroupLine } from '../../src/domain/ssh/exec';
import { eventually } from '../support/eventually';

/**
 * The remote wrapper, run by a real local shell in both situations it meets: started as a process
 * group leader (as OpenSSH starts a login shell) it reports its own group; started inside another
 * group it makes a new session first. Either way the reported group holds the command's children.
 */
function runWrapped(command: string, detached: boolean, inLoginShell = false): Promise<{ pid: number; stderr: string; stdout: string; code: number | null }> {
  return new Promise((resolve) => {
    // A login shell of bash execs sh for the script; one of sh runs it as it is (inLoginShell).
    const child = spawn(inLoginShell ? 'sh' : 'bash', ['-c', inProcessGroup(command, { mergeStderr: false, inLoginShell })], { detached, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ pid: child.pid!, stdout, stderr, code }));
  });
}

const groupOf = (pid: number) => Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)]).toString().trim());
/** Running (a killed child of an exited shell may linger as a zombie until something reaps it). */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
};

describe.each([
  ['already a process group leader (as under sshd)', true, false],
  ['inside another process group (setsid makes one)', false, false],
  ['run in a login shell that is sh, a group leader', true, true],
  ['run in a login shell that is sh, inside another group', false, true],
])('process-group wrapper, %s', (_name, detached, inLoginShell) => {
  test('reports the group its command and the command’s children run in; killing it stops them all', async () => {
    // The command leaves a child behind and reports the real group of its shell and of that child.
    const result = await runWrapped(`sleep 30 >/dev/null 2>&1 & echo "$(ps -o pgid= -p $$) $(ps -o pgid= -p $!) $!"; exit 7`, detached, inLoginShell);
    expect(result.code).toBe(7);
    const reported = processGroupLine(result.stderr)!.pgid;
    const [shellGroup, childGroup, sleeper] = result.stdout.trim().split(/\s+/).map(Number) as [number, number, number];
    expect(shellGroup).toBe(reported);
    expect(childGroup).toBe(reported);
    expect(reported).not.toBe(groupOf(process.pid));
    if (detached) expect(reported).toBe(result.pid);
    expect(alive(sleeper)).toBe(true);
    process.kill(-reported, 'SIGTERM');
    await eventually(async () => alive(sleeper), (living) => !living, 10_000);
  });

  test('the command is evaluated as written: quotes, positional parameters cleared, exit code kept', async () => {
    const result = await runWrapped(`printf '%s|' "a b" 'c' "$#"; exit 3`, detached, inLoginShell);
    expect(result.stdout).toBe('a b|c|0|');
    expect(result.code).toBe(3);
  });

  test('the command runs in sh, named sh in its errors, whatever the login shell', async () => {
    const result = await runWrapped('echo "[$BASH_VERSION]"; no-such-command-here', detached, inLoginShell);
    expect(result.stdout).toBe('[]\n');
    expect(processGroupLine(result.stderr)!.rest).toMatch(/^sh: \d+: (eval: )?no-such-command-here: not found\n$/);
    expect(result.code).toBe(127);
  });
});

test('asked to, the wrapper reports the login shell sshd named (SHELL) on its group’s line', () => {
  const reported = (shell: string) =>
    processGroupLine(spawnSync(shell, ['-c', inProcessGroup('true', { mergeStderr: false, reportShell: true })], { encoding: 'utf8', env: { PATH: process.env.PATH, SHELL: shell } }).stderr);
  expect(reported('/bin/bash')).toMatchObject({ shell: '/bin/bash' });
  expect(reported('/bin/sh')).toMatchObject({ shell: '/bin/sh' });
  expect(processGroupLine('bosun-pgid:42\n')).toEqual({ pgid: 42, rest: '' });
});

describe('process-group wrapper with BOSUN_OUTPUT', () => {
  let tmp: string;
  beforeEach(() => (tmp = mkdtempSync(path.join(os.tmpdir(), 'bosun-output-unit-'))));
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));
  const login = 'unit-login';
  const wrapped = (umask: string, command: string, name = `bosun-output.unit${process.pid}${umask}`) =>
    spawnSync('sh', ['-c', `umask ${umask}; ${inProcessGroup(command, { mergeStderr: true, outputFile: name })}`], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, TMPDIR: tmp, LOGNAME: login },
    });
  const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

  test.each(['0002', '0022', '0077'])(
    'under umask %s the file is named in the login’s own 0700 directory, made when first written; the command keeps its umask; it comes back on stderr after its line and is removed',
    (umask) => {
      const result = wrapped(umask, 'umask; test -e "$BOSUN_OUTPUT" && echo exists || echo absent; echo "$BOSUN_OUTPUT"; echo "a=1" >> "$BOSUN_OUTPUT"; exit 5');
      const [seen, before, file] = result.stdout.split('\n');
      expect([seen, before]).toEqual([umask, 'absent']);
      expect(path.dirname(file!)).toBe(path.join(tmp, `bosun-output-${login}`));
      expect(modeOf(path.dirname(file!))).toBe('700');
      expect(result.status).toBe(5);
      expect(result.stderr.split('\n').slice(1).join('\n')).toBe(`bosun-output:${path.basename(file!)}\na=1\n`);
      expect(existsSync(file!)).toBe(false);
    },
  );

  test('a step that writes nothing leaves nothing and sends no output line', () => {
    const result = wrapped('0022', 'echo "$BOSUN_OUTPUT"');
    expect(result.status).toBe(0);
    expect(result.stderr).not.toMatch(/bosun-output:/);
    expect(readdirSync(path.join(tmp, `bosun-output-${login}`))).toEqual([]);
  });

  test.each([
    ['a link planted where the directory goes', () => symlinkSync(os.tmpdir(), path.join(tmp, `bosun-output-${login}`))],
    ['a file planted where the directory goes', () => writeFileSync(path.join(tmp, `bosun-output-${login}`), '')],
  ])('with %s, a fresh 0600 file is made in TMPDIR instead, and removed', (_name, plant) => {
    plant();
    const result = wrapped('0002', 'umask; ls -l "$BOSUN_OUTPUT" | cut -c1-10; echo "$BOSUN_OUTPUT"; echo "a=1" >> "$BOSUN_OUTPUT"');
    const [seen, mode, file] = result.stdout.split('\n');
    expect([seen, mode, path.dirname(file!)]).toEqual(['0002', '-rw-------', tmp]);
    expect(result.stderr).toMatch(/\nbosun-output:bosun-output\.unit\d+0002\na=1\n$/);
    expect(existsSync(file!)).toBe(false);
  });

  test('the command cannot touch the wrapper’s stderr (fd 3) nor skip the rest by exec', () => {
    const result = wrapped('0022', 'echo "a=1" >> "$BOSUN_OUTPUT"; echo leaked >&3; exec true');
    expect(result.stdout).toMatch(/Bad file descriptor|bad file/i);
    expect(result.stderr).toMatch(/\nbosun-output:bosun-output\.unit\d+0022\na=1\n$/);
    expect(result.status).toBe(0);
  });
});
