import { randomBytes } from 'node:crypto';
import { bearer, runEnded, startBosun, type Bosun } from '../support/bosun';
import { userWithToken, type StepDefinition, type User } from '../support/client';

describe('running deployments over SSH', () => {
  let bosun: Bosun;
  let token: string;
  let ci: User;
  let serverId: string;
  const unique = () => randomBytes(4).toString('hex');

  beforeAll(async () => {
    bosun = await startBosun({ stepOutputLimitBytes: 4096 });
    token = await bosun.token('runs', ['admin'], 'ci-pipeline');
    ci = userWithToken(bosun, token);
    serverId = await ci.addServer();
  });
  afterAll(() => bosun.stop());

  const define = async (steps: StepDefinition[], server = serverId) => (await ci.defineDeployment(server, steps)).id as string;
  /** Asks the server itself whether a process matching the pattern still runs. */
  const stillRunning = async (pattern: string) => {
    // "[s]leep" matches "sleep" but not this check's own command line.
    const check = await define([{ name: 'ps', command: `pgrep -f '[${pattern[0]}]${pattern.slice(1)}' >/dev/null && echo alive || echo gone` }]);
    return (await ci.runToEnd(check)).steps[0].output.trim() === 'alive';
  };

  test('trigger answers 202 queued at once; the run succeeds with each step’s output, exit code and times', async () => {
    const id = await define([
      { name: 'greet', command: 'echo hello' },
      { name: 'mixed', command: 'echo one; echo two >&2; echo three' },
      { name: 'who', command: 'id -un' },
    ]);
    const trigger = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token));
    expect(trigger.status).toBe(202);
    expect(trigger.body).toEqual({ run_id: expect.any(String), status: 'queued', message: expect.stringContaining(`/runs/${trigger.body.run_id}`) });
    const run = await ci.waitForRun(id, trigger.body.run_id, (r) => r.status === 'success' || r.status === 'failed');
    expect(run).toMatchObject({ id: trigger.body.run_id, status: 'success', triggered_by: 'API token: ci-pipeline', error: null });
    // Who triggered it beside: the identity and the token it used.
    expect(run.actor).toEqual({ type: 'service_account', id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'ci-pipeline', token_id: expect.stringMatching(/^[0-9a-f]{24}$/) });
    expect(run.steps.map((s: { output: string }) => s.output)).toEqual(['hello\n', 'one\ntwo\nthree\n', `${bosun.sshd.username}\n`]);
    expect(run.steps.every((s: { status: string; exit_code: number }) => s.status === 'success' && s.exit_code === 0)).toBe(true);
    expect(Date.parse(run.completed_at)).toBeGreaterThanOrEqual(Date.parse(run.started_at));
    expect(Number.isInteger(run.duration_seconds)).toBe(true);
    const deployment = (await bosun.api.get(`/api/v1/deployments/${id}`).set(bearer(token))).body.data;
    expect(deployment).toMatchObject({ last_run_status: 'success', last_run_at: run.started_at });
  });

  test('a failing step fails the run and skips the rest; continue_on_error carries on', async () => {
    const id = await define([
      { name: 'ok', command: 'true' },
      { name: 'soft', command: 'echo warn; exit 3', continue_on_error: true },
      { name: 'hard', command: 'exit 7' },
      { name: 'never', command: 'echo should-not-run' },
    ]);
    const run = await ci.runToEnd(id);
    expect(run.status).toBe('failed');
    expect(run.steps.map((s: { status: string; exit_code: number | null }) => [s.status, s.exit_code])).toEqual([
      ['success', 0], ['failed', 3], ['failed', 7], ['skipped', null],
    ]);
    expect(run.steps[3].output).toBe('');
  });

  test('a step with retries runs again after a non-zero exit, and says so in its output', async () => {
    const marker = `/tmp/bosun-retry-${unique()}`;
    const id = await define([{ name: 'flaky', command: `if [ -f ${marker} ]; then echo second; else touch ${marker}; echo first; exit 1; fi`, retries: 2 }]);
    const run = await ci.runToEnd(id);
    expect(run.status).toBe('success');
    expect(run.steps[0]).toMatchObject({ status: 'success', exit_code: 0, attempts: 2 });
    expect(run.steps[0].output).toMatch(/^first\n[\s\S]*exit code 1; retrying[\s\S]*retry 1 of 2[\s\S]*second\n$/);
  });

  test('timeout_seconds kills the command and everything it started', async () => {
    const tag = `31.${Math.floor(Math.random() * 1e6)}`;
    const id = await define([{ name: 'slow', command: `sh -c 'sleep ${tag}' & sleep ${tag}; echo never`, timeout_seconds: 1 }]);
    const started = Date.now();
    const run = await ci.runToEnd(id);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.status).toBe('failed');
    expect(run.steps[0].output).toMatch(/timed out after 1 s/);
    expect(run.steps[0].output).not.toContain('never');
    expect(await stillRunning(`sleep ${tag}`)).toBe(false);
  });

  test('cancel stops the running command on the server and cancels what is left', async () => {
    const tag = `61.${Math.floor(Math.random() * 1e6)}`;
    const id = await define([{ name: 'long', command: `echo begun; sleep ${tag}` }, { name: 'after', command: 'echo after' }]);
    const trigger = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token));
    await ci.waitForRun(id, trigger.body.run_id, (r) => r.steps[0].output.includes('begun'));
    const cancel = await bosun.api.post(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}/cancel`).set(bearer(token));
    expect(cancel.status).toBe(202);
    const run = await ci.waitForRun(id, trigger.body.run_id, (r) => r.status === 'cancelled', 20_000);
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(run.steps[0].output).toMatch(/cancelled: the command's process group was killed/);
    // Who cancelled it: the identity and the token it used, as who triggered it.
    expect(run.cancelled_by).toEqual(run.actor);
    expect(run.cancelled_by).toMatchObject({ type: 'service_account', token_id: expect.any(String) });
    expect(await stillRunning(`sleep ${tag}`)).toBe(false);
    const again = await bosun.api.post(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}/cancel`).set(bearer(token));
    expect(again.status).toBe(409);
  });

  test('cancels fired right after triggers always end in a final run with nothing left pending or running', async () => {
    const id = await define([{ name: 'a', command: 'sleep 0.2' }, { name: 'b', command: 'echo b' }]);
    const runIds: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const runId = (await ci.trigger(id)).run_id;
      // Not a wait for a condition: each cancel comes a little later than the last, to hit the run at every moment of its start.
      if (i > 0) await new Promise((r) => setTimeout(r, 40 * i));
      const cancel = await bosun.api.post(`/api/v1/deployments/${id}/runs/${runId}/cancel`).set(bearer(token));
      expect([202, 409]).toContain(cancel.status);
      runIds.push(runId);
    }
    for (const runId of runIds) {
      const run = await ci.waitForRun(id, runId, runEnded, 30_000);
      expect(run.steps.filter((s: { status: string }) => s.status === 'pending' || s.status === 'running')).toEqual([]);
    }
    expect((await bosun.api.delete(`/api/v1/deployments/${id}`).set(bearer(token))).status).toBe(204);
  });

  test('the same Idempotency-Key returns the same run, never a second one', async () => {
    const id = await define([{ name: 'once', command: 'echo once' }]);
    const key = `ci-job-${unique()}`;
    const first = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token)).set('Idempotency-Key', key);
    const second = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token)).set('Idempotency-Key', key);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.run_id).toBe(first.body.run_id);
    expect(second.headers['idempotent-replayed']).toBe('true');
    await ci.waitForRun(id, first.body.run_id, (r) => r.status === 'success');
    const runs = await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token));
    expect(runs.body.meta.total).toBe(1);
    const bad = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token)).set('Idempotency-Key', 'has space');
    expect(bad.status).toBe(422);
  });

  test('concurrent triggers with the same Idempotency-Key (a CI retry racing its first attempt) make one run; other keys theirs', async () => {
    const id = await define([{ name: 'once', command: 'echo once' }]);
    const key = `ci-job-${unique()}`;
    const others = [`other-a-${unique()}`, `other-b-${unique()}`];
    // Sent at the same moment, so they share the server's batched queue counter and inserts.
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token)).set('Idempotency-Key', key)),
      ...others.map((k) => bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token)).set('Idempotency-Key', k)),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(202));
    const same = results.slice(0, 6);
    expect(new Set(same.map((r) => r.body.run_id)).size).toBe(1);
    expect(same.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    // A first use of a key is never reported as a replay, even when it shared a batch with duplicates.
    expect(results.slice(6).map((r) => r.headers['idempotent-replayed'])).toEqual([undefined, undefined]);
    expect(new Set(results.map((r) => r.body.run_id)).size).toBe(3);
    for (const r of results) await ci.waitForRun(id, r.body.run_id, (run) => run.status === 'success', 30_000);
    const runs = await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token));
    expect(runs.body.meta.total).toBe(3);
  });

  test('runs on one server execute one at a time, in trigger order', async () => {
    const id = await define([{ name: 'window', command: 'date +%s%N; sleep 0.4; date +%s%N' }]);
    const runIds: string[] = [];
    for (let i = 0; i < 3; i += 1) runIds.push((await ci.trigger(id)).run_id);
    const runs = await Promise.all(runIds.map((runId) => ci.waitForRun(id, runId, (r) => r.status === 'success', 30_000)));
    const windows = runs.map((r) => r.steps[0].output.trim().split('\n').map((n: string) => BigInt(n)));
    for (let i = 1; i < windows.length; i += 1) expect(windows[i]![0] >= windows[i - 1]![1]).toBe(true);
    const list = await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token));
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([...runIds].reverse());
  });

  test('a run’s workflow is started by its server’s queue, its turn given: none exists while the run waits behind another', async () => {
    const slow = await define([{ name: 'hold', command: 'sleep 1' }]);
    const first = (await ci.trigger(slow)).run_id;
    await ci.waitForRun(slow, first, (r) => r.status === 'running');
    const behind = [(await ci.trigger(slow)).run_id, (await ci.trigger(slow)).run_id];
    const workflow = (runId: string) => bosun.temporal.workflow.getHandle(`deployment-run-${runId}`).describe();
    // Waiting for their turn, without a workflow yet (nothing in Temporal to wait, poll or time out).
    for (const runId of behind) {
      expect((await ci.getRun(slow, runId)).status).toBe('queued');
      await expect(workflow(runId)).rejects.toThrow(/not found/i);
    }
    for (const runId of [first, ...behind]) expect((await ci.waitForRun(slow, runId, (r) => r.status === 'success')).status).toBe('success');
    for (const runId of [first, ...behind]) expect((await workflow(runId)).parentExecution?.workflowId).toBe(`server-run-queue-${serverId}`);
  });

  test('a queued run that is cancelled never starts, and the queue moves on to the next', async () => {
    const slow = await define([{ name: 'hold', command: 'sleep 1.5' }]);
    const quick = await define([{ name: 'mark', command: 'echo ran' }]);
    const first = (await ci.trigger(slow)).run_id;
    const doomed = (await ci.trigger(quick)).run_id;
    const last = (await ci.trigger(quick)).run_id;
    expect((await ci.getRun(quick, doomed)).status).toBe('queued');
    // Its deployment's last run is the newest, queued too: the list says so, as its runs do.
    expect(await ci.lastRunStatus(quick)).toEqual(['queued', 'queued']);
    const cancel = await bosun.api.post(`/api/v1/deployments/${quick}/runs/${doomed}/cancel`).set(bearer(token));
    expect(cancel.status).toBe(202);
    expect(cancel.body.data).toMatchObject({ status: 'cancelled', started_at: null, steps: [{ status: 'cancelled', output: '' }] });
    expect((await ci.waitForRun(quick, last, (r) => r.status === 'success')).steps[0].output).toBe('ran\n');
    expect((await ci.getRun(slow, first)).status).toBe('success');
    expect(await ci.getRun(quick, doomed)).toMatchObject({ status: 'cancelled', started_at: null });
    expect(await ci.lastRunStatus(quick)).toEqual(['success', 'success']);
  });

  test('a burst of concurrent triggers on one server still runs one at a time, every run once', async () => {
    const id = await define([{ name: 'window', command: 'date +%s%N; sleep 0.1; date +%s%N' }]);
    const triggers = await Promise.all(Array.from({ length: 8 }, () => bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token))));
    expect(triggers.every((t) => t.status === 202)).toBe(true);
    const runs = await Promise.all(triggers.map((t) => ci.waitForRun(id, t.body.run_id, (r) => r.status === 'success', 30_000)));
    const windows = runs
      .map((r) => r.steps[0].output.trim().split('\n').map((n: string) => BigInt(n)) as [bigint, bigint])
      .sort((x, y) => (x[0] < y[0] ? -1 : 1));
    for (let i = 1; i < windows.length; i += 1) expect(windows[i]![0] >= windows[i - 1]![1]).toBe(true);
  });

  test('runs on different servers proceed in parallel', async () => {
    const other = await ci.addServer({ host: '127.0.0.2' });
    const a = await define([{ name: 'a', command: 'date +%s%N; sleep 1; date +%s%N' }]);
    const b = await define([{ name: 'b', command: 'date +%s%N; sleep 1; date +%s%N' }], other);
    const [ra, rb] = await Promise.all([ci.runToEnd(a), ci.runToEnd(b)]);
    const [aStart, aEnd] = ra.steps[0].output.trim().split('\n').map(BigInt);
    const [bStart, bEnd] = rb.steps[0].output.trim().split('\n').map(BigInt);
    expect(aStart < bEnd && bStart < aEnd).toBe(true);
  });

  test('output over the limit keeps its head and tail and marks the cut', async () => {
    const id = await define([{ name: 'chatty', command: 'seq 1 20000' }]);
    const run = await ci.runToEnd(id);
    const output: string = run.steps[0].output;
    expect(output.startsWith('1\n2\n3\n')).toBe(true);
    expect(output.endsWith('19999\n20000\n')).toBe(true);
    expect(output).toMatch(/\[\d+ bytes of output omitted\]/);
    expect(output.length).toBeLessThan(4096 + 100);
  });

  test('server credentials and organization secrets never appear in output, even split across chunks', async () => {
    const pwServer = await ci.addServer({ host: '127.0.0.3', auth_method: 'password' });
    const secret = `tok-${unique()}-${unique()}`;
    expect((await bosun.api.put('/api/v1/secrets/DEPLOY_TOKEN').set(bearer(token)).send({ value: secret })).status).toBe(200);
    const listed = await bosun.api.get('/api/v1/secrets').set(bearer(token));
    expect(listed.body.data).toEqual([{ name: 'DEPLOY_TOKEN', updated_at: expect.any(String) }]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const half = Math.floor(secret.length / 2);
    const id = await define(
      [
        { name: 'leak-pw', command: `echo "password is ${bosun.sshd.password}"` },
        { name: 'leak-secret', command: `printf '%s' '${secret.slice(0, half)}'; sleep 0.5; printf '%s\\n' '${secret.slice(half)}'; echo done` },
      ],
      pwServer,
    );
    const run = await ci.runToEnd(id);
    expect(run.steps[0].output).toBe('password is [redacted]\n');
    expect(run.steps[1].output).toBe('[redacted]\ndone\n');
    // The definition's own command is the user's text; what the server printed is what must be clean.
    expect(JSON.stringify(run.steps.map((s: { output: string }) => s.output))).not.toContain(bosun.sshd.password);
  });
});
