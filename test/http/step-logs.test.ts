import { bearer, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';

/** A step's whole log, beyond the 128 KiB a run shows: by line range, the tail, a search, the raw text. */
describe('steps’ whole logs over HTTP', () => {
  let bosun: Bosun;
  let ops: User;
  let deploymentId: string;
  let runId: string;
  const LINES = 30_000;
  const LIMIT = 1024 * 1024;
  const GROWN = `/tmp/bosun-step-log-grown-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    bosun = await startBosun({ stepLogLimitBytes: LIMIT });
    ops = await asUser(bosun, 'logs');
    await bosun.api.put('/api/v1/secrets/db_password').set(bearer(ops.token)).send({ value: 'hunter2-very-secret' });
    const server = await ops.addServer({ host: '127.0.0.4' });
    const deployment = await ops.defineDeployment(server, [
      { name: 'chatty', command: `seq 1 ${LINES} | sed 's/^/line-/'; echo "password is hunter2-very-secret"; printf 'no newline at the end'` },
      { name: 'flood', command: 'yes 0123456789abcdef | head -c 3000000' },
      // Small at first (its run holds all of it), then far more, in a second attempt.
      { name: 'grows', command: `test -e ${GROWN} || { touch ${GROWN}; echo small-first; exit 1; }; echo second-attempt; sleep 0.5; seq 1 20000 | sed 's/^/more-/'`, retries: 1 },
    ]);
    deploymentId = deployment.id;
    const run = await ops.runToEnd(deploymentId);
    expect(run.status).toBe('success');
    runId = run.id;
  });
  afterAll(() => bosun.stop());

  const log = (step: number | string, query = '') => bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${runId}/steps/${step}/log${query}`).set(bearer(ops.token));

  test('the run shows a capped output; the whole log has every line, by range and at the tail', async () => {
    const run = await ops.getRun(deploymentId, runId);
    expect(run.steps[0].output).toContain('bytes of output omitted');

    const tail = (await log(1)).body.data;
    expect(tail).toMatchObject({ step: 1, first_line: LINES + 2 - 999, total_lines: LINES + 2, complete: true });
    expect(tail.lines.slice(-3)).toEqual([`line-${LINES}`, 'password is [redacted]', 'no newline at the end']);
    expect(tail.lines).toHaveLength(1000);

    expect((await log(1, '?from=1&limit=3')).body.data.lines).toEqual(['line-1', 'line-2', 'line-3']);
    const middle = (await log(1, '?from=15000&limit=2')).body.data;
    expect([middle.first_line, middle.lines]).toEqual([15000, ['line-15000', 'line-15001']]);
    // Every line, in pages, is the sequence itself.
    const all: string[] = [];
    for (let from = 1; from <= LINES + 2; from += 5000) all.push(...(await log(1, `?from=${from}&limit=5000`)).body.data.lines);
    expect(all).toEqual([...Array.from({ length: LINES }, (_, i) => `line-${i + 1}`), 'password is [redacted]', 'no newline at the end']);
    expect((await log(1, `?from=${LINES + 10}`)).body.data.lines).toEqual([]);
  });

  test('searching is done by the server: line numbers and text, at most 1,000, saying when there were more', async () => {
    const found = (await log(1, '?q=LINE-2999')).body.data;
    expect(found.matches.map((m: { line: number }) => m.line)).toEqual([2999, ...Array.from({ length: 10 }, (_, i) => 29990 + i)]);
    expect(found.matches[0].text).toBe('line-2999');
    expect(found.more).toBe(false);
    expect((await log(1, '?q=hunter2')).body.data.matches).toEqual([]);
    const many = (await log(1, '?q=line-')).body.data;
    expect([many.matches.length, many.more]).toEqual([1000, true]);
  });

  test('the raw download is the whole text, as text/plain', async () => {
    const raw = await log(1, '?format=raw');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(raw.headers['content-disposition']).toMatch(/^attachment; filename=".*-step-1\.log"$/);
    expect(raw.text).toBe(`${Array.from({ length: LINES }, (_, i) => `line-${i + 1}`).join('\n')}\npassword is [redacted]\nno newline at the end`);
  });

  test('a step past the limit keeps its first STEP_LOG_LIMIT_BYTES and says so', async () => {
    const raw = (await log(2, '?format=raw')).text;
    expect(raw.length).toBeGreaterThan(LIMIT - 100);
    expect(raw.length).toBeLessThan(LIMIT + 300);
    expect(raw).toMatch(/\[the whole log stops here: the step wrote more than 1 MiB \(STEP_LOG_LIMIT_BYTES\)/);
    expect(raw.startsWith('0123456789abcdef\n0123456789abcdef\n')).toBe(true);
  });

  test('a log that outgrows what its run holds still starts at its first line, earlier attempts included', async () => {
    const raw = (await log(3, '?format=raw')).text;
    expect(raw.startsWith('small-first\n')).toBe(true);
    expect(raw).toContain('retry 1 of 1');
    expect(raw).toContain('second-attempt\nmore-1\nmore-2\n');
    expect(raw.endsWith('more-20000\n')).toBe(true);
    expect((await log(3, '?from=1&limit=1')).body.data.lines).toEqual(['small-first']);
    expect((await ops.getRun(deploymentId, runId)).steps[2].output).toContain('bytes of output omitted');
  });

  test('bad requests are refused in the usual envelope; unknown steps are not found', async () => {
    for (const query of ['?from=0', '?limit=100000', '?format=pdf', '?q=', '?other=1']) {
      const res = await log(1, query);
      expect([query, res.status, res.body.error.code]).toEqual([query, 422, 'validation_failed']);
    }
    expect((await log(0)).status).toBe(422);
    expect((await log(4)).status).toBe(404);
    const stranger = await bosun.token('logs-strangers', ['read']);
    expect((await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${runId}/steps/1/log`).set(bearer(stranger))).status).toBe(404);
  });

  test('a conversation’s step has its whole log too', async () => {
    const server = (await ops.listServers()).data[0].id;
    const conversation = await ops.converse(server, 'show the hostname');
    const step = conversation.steps[0];
    const res = await bosun.api.get(`/api/v1/conversations/${conversation.id}/steps/${step.id}/log`).set(bearer(ops.token));
    expect(res.status).toBe(200);
    expect(res.body.data.lines.join('\n')).toBe(step.execution_log.replace(/\n$/, ''));
  });
});
