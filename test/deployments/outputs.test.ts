import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';

/*
 * Outputs on the real stack: a step writes `name=value` lines (or `name<<DELIMITER` … `DELIMITER`)
 * to the file $BOSUN_OUTPUT names, and the run shows them. A fleet's "servers" are the test sshd on
 * three loopback addresses; a step knows which one it runs on from SSH_CONNECTION.
 */

const ADDRESSES = ['127.0.0.10', '127.0.0.11', '127.0.0.12'];
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let ops: User;
let serverId: string;
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'outputs');
  serverId = await ops.addServer({ host: '127.0.0.1', title: 'app-1' });
  work = mkdtempSync(path.join(tmpdir(), 'bosun-outputs-'));
  // The sshd's login writes here.
  chmodSync(work, 0o777);
}, 120_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

type Step = { name: string; command: string; continue_on_error?: boolean; retries?: number; timeout_seconds?: number };
const runSteps = async (steps: Step[], extra: Record<string, unknown> = {}) => {
  const deployment = await ops.define({ server_id: serverId, steps, ...extra });
  return ops.runToEnd(deployment.id);
};

describe('a step’s outputs', () => {
  test('name=value and name<<DELIMITER lines are recorded on the run and its target; a later step’s value wins; a value is text, never evaluated', async () => {
    const marker = path.join(work, 'touched');
    const run = await runSteps([
      { name: 'build', command: 'echo building; echo "artifact=web-1.4.2.tar.gz" >> "$BOSUN_OUTPUT"; echo "version=1" >> "$BOSUN_OUTPUT"' },
      { name: 'notes', command: `printf 'notes<<EOF\\nline one\\n\\nline = three\\nEOF\\n' >> "$BOSUN_OUTPUT"; echo "version=2" >> "$BOSUN_OUTPUT"` },
      { name: 'text', command: `echo 'danger=$(touch ${marker})' >> "$BOSUN_OUTPUT"; echo 'empty=' >> "$BOSUN_OUTPUT"; touch ${marker}-writable` },
    ]);
    const outputs = { artifact: 'web-1.4.2.tar.gz', version: '2', notes: 'line one\n\nline = three', danger: `$(touch ${marker})`, empty: '' };
    expect(run).toMatchObject({ status: 'success', outputs, output_conflicts: [] });
    expect(run.targets[0].outputs).toEqual(outputs);
    // What the file held is not the step's output.
    expect(run.steps.map((s: { output: string }) => s.output)).toEqual(['building\n', '', '']);
    // The login could have touched it (it did its neighbour): nothing evaluated the value.
    expect(existsSync(`${marker}-writable`)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  test('a retried step records its last attempt’s outputs; a step that exits non-zero still records what it wrote', async () => {
    const once = path.join(work, `once-${randomBytes(4).toString('hex')}`);
    const run = await runSteps([
      { name: 'flaky', retries: 1, command: `if [ ! -e ${once} ]; then touch ${once}; echo "attempt=1" >> "$BOSUN_OUTPUT"; echo "first_only=yes" >> "$BOSUN_OUTPUT"; exit 1; fi; echo "attempt=2" >> "$BOSUN_OUTPUT"` },
      { name: 'failing', continue_on_error: true, command: 'echo "partial=yes" >> "$BOSUN_OUTPUT"; exit 3' },
    ]);
    expect(run.status).toBe('failed');
    expect(run.steps.map((s: { status: string; exit_code: number; attempts: number }) => [s.status, s.exit_code, s.attempts])).toEqual([['success', 0, 2], ['failed', 3, 1]]);
    expect(run.outputs).toEqual({ attempt: '2', partial: 'yes' });
  });

  test('a retry’s run keeps what the steps it skips recorded in the run it retries', async () => {
    const fixed = path.join(work, `fixed-${randomBytes(4).toString('hex')}`);
    const deployment = await ops.define({
      server_id: serverId,
      steps: [
        { name: 'build', command: 'echo "artifact=web-1.4.2.tar.gz" >> "$BOSUN_OUTPUT"' },
        { name: 'deploy', command: `[ -e ${fixed} ] || exit 3; echo "url=https://web.example" >> "$BOSUN_OUTPUT"` },
      ],
    });
    const { run_id: failedId } = await ops.trigger(deployment.id);
    expect(await ops.waitForRun(deployment.id, failedId)).toMatchObject({ status: 'failed', outputs: { artifact: 'web-1.4.2.tar.gz' } });
    writeFileSync(fixed, '');
    const { run_id: retryId } = await ops.retry(deployment.id, failedId);
    const retried = await ops.waitForRun(deployment.id, retryId);
    expect(retried.steps.map((s: { status: string }) => s.status)).toEqual(['skipped', 'success']);
    expect(retried.outputs).toEqual({ artifact: 'web-1.4.2.tar.gz', url: 'https://web.example' });
  });

  test('a malformed line fails the step although its command exited 0, with the line named in its output and the run’s error', async () => {
    const [malformed, badName, unended] = await Promise.all([
      runSteps([
        { name: 'write', command: 'echo "ok=1" >> "$BOSUN_OUTPUT"; echo "" >> "$BOSUN_OUTPUT"; echo "just some text" >> "$BOSUN_OUTPUT"' },
        { name: 'after', command: 'echo never' },
      ]),
      runSteps([{ name: 'write', command: 'echo "2fast=1" >> "$BOSUN_OUTPUT"' }]),
      runSteps([{ name: 'write', command: `printf 'notes<<EOF\\nno end\\n' >> "$BOSUN_OUTPUT"` }]),
    ]);
    expect(malformed).toMatchObject({ status: 'failed', output_conflicts: [] });
    expect(malformed.outputs).toEqual({});
    expect(malformed.steps.map((s: { status: string; exit_code: number }) => [s.status, s.exit_code])).toEqual([['failed', 0], ['skipped', null]]);
    expect(malformed.steps[0].output).toBe('\n--- BOSUN_OUTPUT line 3: expected name=value or name<<DELIMITER ---\n');
    expect(malformed.error).toBe('Step "write" (1/2) failed on app-1: BOSUN_OUTPUT line 3: expected name=value or name<<DELIMITER');
    expect(badName.steps[0].output).toContain('--- BOSUN_OUTPUT line 1: "2fast" is not an output name (^[A-Za-z_][A-Za-z0-9_-]{0,127}$) ---');
    expect(unended.error).toContain('BOSUN_OUTPUT line 1: the value of "notes" never ends (no line "EOF" after it)');
  });

  test('a value over 64 KiB fails its step; so does the 101st name of a run (100 are fine)', async () => {
    const [large, many] = await Promise.all([
      runSteps([{ name: 'large', command: `printf 'artifact=%070000d\\n' 0 >> "$BOSUN_OUTPUT"` }]),
      runSteps([
        { name: 'sixty', command: 'i=1; while [ $i -le 60 ]; do echo "a$i=$i"; i=$((i+1)); done >> "$BOSUN_OUTPUT"' },
        { name: 'forty-more', command: 'i=1; while [ $i -le 40 ]; do echo "a$i=again"; echo "b$i=$i"; i=$((i+1)); done >> "$BOSUN_OUTPUT"' },
        { name: 'one-more', command: 'echo "a1=last" >> "$BOSUN_OUTPUT"; echo "c1=1" >> "$BOSUN_OUTPUT"' },
      ]),
    ]);
    expect(large.status).toBe('failed');
    expect(large.outputs).toEqual({});
    expect(large.steps[0].output).toBe('\n--- output "artifact" is 70000 bytes: at most 65536 ---\n');
    expect(large.error).toContain('output "artifact" is 70000 bytes: at most 65536');
    expect(many.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'success', 'failed']);
    expect(many.steps[2].output).toContain('--- the run would have 101 outputs: at most 100 ---');
    expect(Object.keys(many.outputs)).toHaveLength(100);
    expect(many.outputs).toMatchObject({ a1: 'again', a41: '41', b40: '40' });
  });

  test('values holding an organization secret or a secret parameter are redacted as output is', async () => {
    const secret = `tok-${randomBytes(6).toString('hex')}`;
    const parameter = `param-${randomBytes(6).toString('hex')}`;
    expect((await ops.request('put', '/secrets/OUTPUT_TOKEN', { value: secret })).status).toBe(200);
    const deployment = await ops.define({
      server_id: serverId,
      parameters: [{ name: 'api_token', secret: true }],
      steps: [{ name: 'leak', command: `echo "token=Bearer ${secret}" >> "$BOSUN_OUTPUT"; printf 'both<<EOF\\n%s\\n%s\\nEOF\\n' "$BOSUN_PARAM_API_TOKEN" 'plain' >> "$BOSUN_OUTPUT"` }],
    });
    const { run_id: runId } = await ops.triggerWith(deployment.id, { parameters: { api_token: parameter } });
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run.outputs).toEqual({ token: 'Bearer [redacted]', both: '[redacted]\nplain' });
    // The command is the user's own text; what the server gave back is what must be clean.
    const shown = JSON.stringify([run.outputs, run.targets[0].outputs, (await ops.getTarget(deployment.id, runId, serverId)).outputs]);
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain(parameter);
  });

  test('the file is in a directory of the user’s alone, made when written, and gone after its step: ended, exited, failed, timed out or refused', async () => {
    const run = await runSteps([
      {
        name: 'ended',
        command: 'echo "$BOSUN_OUTPUT"; ls -ld "$(dirname "$BOSUN_OUTPUT")" | cut -c1-10; test -e "$BOSUN_OUTPUT" || echo absent; echo "a=1" >> "$BOSUN_OUTPUT"',
      },
      { name: 'exited', continue_on_error: true, command: 'echo "$BOSUN_OUTPUT"; echo "b=1" >> "$BOSUN_OUTPUT"; exit 4' },
      // Waits out its one-second limit: the kill of its process group is what this step is about.
      { name: 'timed-out', continue_on_error: true, timeout_seconds: 1, command: 'echo "$BOSUN_OUTPUT"; echo "c=1" >> "$BOSUN_OUTPUT"; sleep 30' },
      { name: 'refused', continue_on_error: true, command: 'echo "$BOSUN_OUTPUT"; echo "not an output" >> "$BOSUN_OUTPUT"' },
      { name: 'list', command: 'ls -a "${TMPDIR:-/tmp}" "${TMPDIR:-/tmp}/bosun-output-$LOGNAME"' },
    ]);
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'failed', 'failed', 'failed', 'success']);
    const files = run.steps.slice(0, 4).map((s: { output: string }) => s.output.split('\n')[0]);
    for (const file of files) expect(file).toMatch(/\/bosun-output\.[0-9a-f]{24}$/);
    expect(new Set(files).size).toBe(4);
    expect(path.dirname(files[0]!)).toMatch(/\/bosun-output-[^/]+$/);
    expect(run.steps[0].output.split('\n').slice(1, 3)).toEqual(['drwx------', 'absent']);
    const listed = run.steps[4].output.split('\n');
    for (const file of files) expect(listed).not.toContain(path.basename(file));
    // Timed out: killed before it ended, so what it wrote is not recorded.
    expect(run.outputs).toEqual({ a: '1', b: '1' });
  });
});

describe('a fleet run’s outputs', () => {
  test('the values every target gave the same are the run’s outputs; the others are conflicts naming what each target gave', async () => {
    const servers: string[] = [];
    for (const [i, host] of ADDRESSES.entries()) servers.push(await ops.addServer({ host, title: `web-${i + 1}` }));
    const deployment = await ops.define({
      targets: { server_ids: servers },
      strategy: { batch_size: 3 },
      steps: [
        {
          name: 'release',
          command: `${HERE}; echo "version=1.4.2" >> "$BOSUN_OUTPUT"; echo "host=$here" >> "$BOSUN_OUTPUT"; if [ "$here" = ${ADDRESSES[0]} ]; then echo "leader=yes" >> "$BOSUN_OUTPUT"; fi`,
        },
      ],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run).toMatchObject({ status: 'success', outputs: { version: '1.4.2' } });
    expect(run.output_conflicts).toEqual([
      {
        name: 'host',
        targets: ADDRESSES.map((host, i) => ({ server_id: servers[i], server_title: `web-${i + 1}`, value: host })),
      },
      {
        name: 'leader',
        targets: [
          { server_id: servers[0], server_title: 'web-1', value: 'yes' },
          { server_id: servers[1], server_title: 'web-2', value: null },
          { server_id: servers[2], server_title: 'web-3', value: null },
        ],
      },
    ]);
    for (const [i, host] of ADDRESSES.entries()) {
      const target = run.targets.find((t: { server_id: string }) => t.server_id === servers[i]);
      expect(target.outputs).toEqual({ version: '1.4.2', host, ...(i === 0 ? { leader: 'yes' } : {}) });
    }
    expect((await ops.getTarget(deployment.id, runId, servers[1]!)).outputs).toEqual({ version: '1.4.2', host: ADDRESSES[1] });
  });
});
