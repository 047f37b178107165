import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { processesMatching } from '../support/processes';
import { asUser, type User } from '../support/client';
import { connectSocket } from '../support/socket';
import type { DeploymentRunUpdatedEvent } from '../../src/domain/events';

/*
 * Fleet runs on the real stack: six "servers" are one test sshd on six loopback addresses
 * (127.0.0.2–127.0.0.7). A step knows which one it runs on from SSH_CONNECTION (its third field is
 * the address the client connected to), which is how one target is made to fail.
 */

const ADDRESSES = [2, 3, 4, 5, 6, 7].map((n) => `127.0.0.${n}`);
/** The address the step's SSH connection came in on. */
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let ops: User;
let servers: string[];
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'fleet');
  servers = [];
  for (const [i, host] of ADDRESSES.entries()) servers.push(await ops.addServer({ host, title: `web-${i + 1}` }));
  work = mkdtempSync(path.join(tmpdir(), 'bosun-fleet-'));
  execFileSync('chmod', ['777', work]);
}, 120_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Steps that log each execution per address (to count them) and fail on `failing` unless `fixed` exists. */
function countedSteps(tag: string, failing: string, fixed = `${work}/${tag}-fixed`) {
  return [
    { name: 'one', command: `${HERE}; echo "one on $here"; echo x >> ${work}/${tag}-one-$here` },
    { name: 'two', command: `${HERE}; echo x >> ${work}/${tag}-two-$here; if [ "$here" = ${failing} ] && [ ! -e ${fixed} ]; then echo "broken on $here"; exit 3; fi; echo "two on $here"` },
  ];
}
const executions = (tag: string, step: string, address: string) => {
  const file = `${work}/${tag}-${step}-${address}`;
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
};
const statuses = (run: { targets: Array<{ title: string; status: string }> }) => Object.fromEntries(run.targets.map((t) => [t.title, t.status]));

describe('a fleet run', () => {
  test('batch_size 2, one target failing, max_failures 0: the rest of its batch finishes, later batches are skipped, the run fails', async () => {
    const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 2 }, steps: countedSteps('strict', '127.0.0.3') });
    expect(deployment).toMatchObject({ server_id: null, targets: { server_ids: servers, tags: [] }, strategy: { batch_size: 2, max_failures: null } });
    const { run_id: runId } = await ops.trigger(deployment.id);
    const run = await ops.waitForRun(deployment.id, runId);

    expect(run).toMatchObject({ status: 'failed', server_id: null, steps: [], strategy: { batch_size: 2, max_failures: 0, batches: 3 } });
    expect(run.summary).toEqual({ total: 6, success: 1, failed: 1, running: 0, queued: 0, skipped: 4, cancelled: 0 });
    expect(statuses(run)).toEqual({ 'web-1': 'success', 'web-2': 'failed', 'web-3': 'skipped', 'web-4': 'skipped', 'web-5': 'skipped', 'web-6': 'skipped' });
    expect(run.targets.map((t: { batch: number }) => t.batch)).toEqual([1, 1, 2, 2, 3, 3]);
    expect(run.error).toMatch(/^1 of 6 targets failed \(more than the 0 allowed: later batches skipped\); first: Step "two" \(2\/2\) failed on web-2: exit code 3/);
    const failed = run.targets.find((t: { title: string }) => t.title === 'web-2');
    expect(failed).toMatchObject({ host: '127.0.0.3', error: expect.stringContaining('exit code 3'), steps: [{ status: 'success' }, { status: 'failed', exit_code: 3 }] });
    // Skipped targets never ran anything.
    for (const address of ADDRESSES.slice(2)) expect(executions('strict', 'one', address)).toBe(0);
    // A target's output is read on its own.
    const detail = await ops.getTarget(deployment.id, runId, servers[1]!);
    expect(detail.steps[1].output).toContain('broken on 127.0.0.3');
    // The list of runs shows the summary; the deployment shows its last run failed.
    const list = await bosun.api.get(`/api/v1/deployments/${deployment.id}/runs`).set('Authorization', `Bearer ${ops.token}`);
    expect(list.body.data[0]).toMatchObject({ id: runId, status: 'failed', summary: { total: 6, failed: 1, skipped: 4, success: 1 } });
    expect((await ops.getDeployment(deployment.id)).last_run_status).toBe('failed');
  });

  test('max_failures "50%": every batch runs; the run still fails (a target failed); retry runs only that target, from its failed step', async () => {
    const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 2, max_failures: '50%' }, steps: countedSteps('lenient', '127.0.0.3') });
    const { run_id: runId } = await ops.trigger(deployment.id);
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run).toMatchObject({ status: 'failed', strategy: { batch_size: 2, max_failures: 3, batches: 3 } });
    expect(run.summary).toMatchObject({ total: 6, success: 5, failed: 1, skipped: 0 });
    expect(run.error).toMatch(/^1 of 6 targets failed \(3 allowed: every batch ran\)/);

    writeFileSync(`${work}/lenient-fixed`, '');
    const retried = await ops.retry(deployment.id, runId);
    const retry = await ops.waitForRun(deployment.id, retried.run_id);
    expect(retry).toMatchObject({ status: 'success', retry_of: runId, summary: { total: 1, success: 1 } });
    expect(retry.targets).toEqual([expect.objectContaining({ title: 'web-2', status: 'success', steps: [expect.objectContaining({ name: 'one', status: 'skipped' }), expect.objectContaining({ name: 'two', status: 'success' })] })]);
    // Step one succeeded on every server once and was never repeated; step two ran again only where it failed.
    for (const address of ADDRESSES) expect(executions('lenient', 'one', address)).toBe(1);
    expect(ADDRESSES.map((a) => executions('lenient', 'two', a))).toEqual([1, 2, 1, 1, 1, 1]);
    // Nothing left to retry.
    const again = await bosun.api.post(`/api/v1/deployments/${deployment.id}/runs/${retried.run_id}/retry`).set('Authorization', `Bearer ${ops.token}`);
    expect(again.status).toBe(409);
  });

  test('the plan shows the targets in the batches the run then uses, the steps and the environment (secrets masked), and runs nothing', async () => {
    const deployment = await ops.define({
      targets: { server_ids: servers.slice(0, 5) },
      strategy: { batch_size: '40%' },
      parameters: [{ name: 'version', required: true, pattern: '[0-9]+\\.[0-9]+\\.[0-9]+' }, { name: 'api_token', secret: true }],
      steps: [{ name: 'show', command: 'echo "v=$BOSUN_PARAM_VERSION"' }],
    });
    const body = { parameters: { version: '1.4.2', api_token: 'tok-very-secret-123' } };
    const plan = await ops.plan(deployment.id, body);
    expect(plan.strategy).toEqual({ batch_size: 2, max_concurrency: null, max_failures: 0, batches: 3, gates: [], health_check: null });
    expect(plan.environment).toEqual({ BOSUN_PARAM_VERSION: '1.4.2', BOSUN_PARAM_API_TOKEN: '********' });
    expect(plan.steps).toEqual([expect.objectContaining({ name: 'show' })]);
    expect(plan.warnings).toEqual([]);
    expect(JSON.stringify(plan)).not.toContain('tok-very-secret-123');
    // Nothing was stored.
    const none = await bosun.api.get(`/api/v1/deployments/${deployment.id}/runs`).set('Authorization', `Bearer ${ops.token}`);
    expect(none.body.data).toEqual([]);

    const run = await ops.waitForRun(deployment.id, (await ops.triggerWith(deployment.id, body)).run_id);
    expect(run.status).toBe('success');
    expect(run.targets.map((t: { server_id: string; batch: number }) => [t.server_id, t.batch])).toEqual(plan.targets.map((t: { server_id: string; batch: number }) => [t.server_id, t.batch]));
    expect(run.parameters).toEqual({ version: '1.4.2', api_token: '********' });
  });

  test('cancelling stops every running target (their commands killed) and the batches still waiting', async () => {
    const marker = `sleep 47.${Date.now() % 1000}`;
    const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 3 }, steps: [{ name: 'long', command: `echo started; ${marker}` }] });
    const { run_id: runId } = await ops.trigger(deployment.id);
    await ops.waitForRun(deployment.id, runId, (r) => r.summary.running === 3 && r.targets.filter((t: { steps: Array<{ status: string }> }) => t.steps[0]!.status === 'running').length === 3);
    await ops.cancelRun(deployment.id, runId);
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run.status).toBe('cancelled');
    expect(run.summary).toMatchObject({ total: 6, cancelled: 6 });
    expect(run.targets.slice(0, 3).map((t: { steps: Array<{ status: string }> }) => t.steps[0]!.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    // No command is left on the "servers".
    expect(processesMatching(marker)).toBe('');
  });
});

describe('a server shared by fleet runs and one-server runs', () => {
  test('runs there one at a time: a target with nothing ahead runs at once, what comes after waits its turn', async () => {
    const window = [{ name: 'window', command: 'date +%s%N; sleep 0.6; date +%s%N' }];
    const single = await ops.define({ server_id: servers[0], steps: window });
    const fleet = await ops.define({ targets: { server_ids: [servers[0], servers[1]] }, steps: window });
    const onShared = (run: { targets: Array<{ server_id: string; status: string }> }) => run.targets.find((t) => t.server_id === servers[0])!;
    const done = (r: { status: string }) => ['success', 'failed', 'cancelled'].includes(r.status);

    // Nothing ahead of it on web-1: its target runs at once. What is triggered meanwhile waits behind it.
    const first = (await ops.trigger(fleet.id)).run_id;
    await ops.waitForRun(fleet.id, first, (r) => onShared(r).status === 'running');
    const second = (await ops.trigger(single.id)).run_id;
    const third = (await ops.trigger(fleet.id)).run_id;
    const fourth = (await ops.trigger(single.id)).run_id;

    const [a, b, c, d] = await Promise.all([
      ops.waitForRun(fleet.id, first, done, 30_000),
      ops.waitForRun(single.id, second, done, 30_000),
      ops.waitForRun(fleet.id, third, done, 30_000),
      ops.waitForRun(single.id, fourth, done, 30_000),
    ]);
    expect([a, b, c, d].map((r) => r.status)).toEqual(['success', 'success', 'success', 'success']);
    const windowOf = (step: { output: string }) => step.output.trim().split('\n').map((n) => BigInt(n));
    const targetWindow = async (runId: string, serverId: string) => windowOf((await ops.getTarget(fleet.id, runId, serverId)).steps[0]);
    const sharedWindows = [await targetWindow(first, servers[0]!), windowOf(b.steps[0]), await targetWindow(third, servers[0]!), windowOf(d.steps[0])];
    // One at a time; the first two in trigger order (a target takes its place when its batch starts:
    // the third and fourth may go either way).
    const ordered = [...sharedWindows].sort((x, y) => (x[0]! < y[0]! ? -1 : 1));
    for (let i = 1; i < ordered.length; i += 1) expect(ordered[i]![0]! >= ordered[i - 1]![1]!).toBe(true);
    expect(ordered.slice(0, 2)).toEqual(sharedWindows.slice(0, 2));
    // The other server's target did not wait for web-1's runs.
    const elsewhere = await targetWindow(third, servers[1]!);
    expect(elsewhere[0]! < sharedWindows[2]![0]!).toBe(true);
  });
});

describe('a target whose server cannot take it', () => {
  test('a server never verified counts as a failed target, unrun, and the plan warns of it', async () => {
    // Nothing listens there: its verification never succeeds.
    const created = await bosun.api
      .post('/api/v1/servers')
      .set('Authorization', `Bearer ${ops.token}`)
      .send({ title: 'never-verified', host: '127.0.0.200', port: 1, username: 'deploy', auth_method: 'password', password: 'pw' });
    const unverified = created.body.data.id as string;
    const deployment = await ops.define({ targets: { server_ids: [servers[0], unverified] }, strategy: { max_failures: 1 }, steps: [{ name: 'hi', command: 'echo hi' }] });
    const plan = await ops.plan(deployment.id);
    expect(plan.warnings).toEqual([expect.objectContaining({ server_id: unverified, code: 'unverified' })]);

    const run = await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id);
    expect(run.status).toBe('failed');
    expect(statuses(run)).toEqual({ 'web-1': 'success', 'never-verified': 'failed' });
    const target = run.targets.find((t: { server_id: string }) => t.server_id === unverified);
    expect(target).toMatchObject({ error: 'Not run: the server has not been verified: its host key is unknown, so Bosun will not connect', steps: [{ status: 'skipped', attempts: 0 }] });
    expect(run.error).toMatch(/^1 of 2 targets failed \(1 allowed: every batch ran\); first: Not run: the server has not been verified/);
  });
});

describe('watching a fleet run', () => {
  test('live events name the target that changed, with its own sequence, and output chunks name their server; Temporal shows one workflow with a child per target', async () => {
    const deployment = await ops.define({ targets: { server_ids: servers.slice(0, 3) }, steps: [{ name: "hello", command: `${HERE}; sleep 1; echo "hello from $here"` }] });
    const socket = await connectSocket(bosun.url, ops.token);
    const events: DeploymentRunUpdatedEvent[] = [];
    socket.on('DeploymentRunUpdated', (event) => events.push(event));
    try {
      const { run_id: runId } = await ops.trigger(deployment.id);
      const answer = await socket.emitWithAck('subscribe', { run_id: runId });
      expect(answer.ok).toBe(true);
      const run = await ops.waitForRun(deployment.id, runId);
      expect(run.status).toBe('success');
      await eventually(async () => events.some((e) => e.target === null && e.status === 'success'), Boolean);

      for (const [i, server] of servers.slice(0, 3).entries()) {
        const mine = events.filter((e) => e.target?.server_id === server);
        expect(mine.length).toBeGreaterThan(0);
        for (const e of mine) expect(e).toMatchObject({ run_id: runId, seq: null, steps: [], target: { title: `web-${i + 1}`, host: ADDRESSES[i] } });
        // Each target's own sequence, without gaps from what the subscription saw.
        const seqs = mine.map((e) => e.target!.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(mine.at(-1)!.target!.status).toBe('success');
        const output = mine.flatMap((e) => (e.output ? [e.output] : []));
        expect(output.map((o) => o.data).join('')).toBe(`hello from ${ADDRESSES[i]}\n`);
        for (const o of output) expect(o).toMatchObject({ server_id: server, step: 0, step_name: 'hello' });
      }
      // The run's own changes keep the run's sequence.
      const own = events.filter((e) => e.target === null);
      expect(own.map((e) => e.seq)).toEqual(own.map((_, i) => own[0]!.seq! + i));

      // In Temporal: deployment-run-<run id>, and a child per group of a batch's targets (here one). The run's
      // document is marked success by the workflow's last activity, a moment before the workflow completes.
      const handle = bosun.temporal.workflow.getHandle(`deployment-run-${runId}`);
      expect(await handle.result()).toMatchObject({ status: 'success', targets: 3 });
      const parent = await handle.describe();
      expect(parent.type).toBe('deploymentFleetWorkflow');
      expect(parent.status.name).toBe('COMPLETED');
      const child = await bosun.temporal.workflow.getHandle(`deployment-run-${runId}-batch-1-group-1`).describe();
      expect(child.type).toBe('fleetTargetGroupWorkflow');
      expect(child.parentExecution?.workflowId).toBe(`deployment-run-${runId}`);
      expect(child.status.name).toBe('COMPLETED');
      expect((await child.staticSummary?.())).toBe(`${deployment.name}: batch 1, group 1/1 (3 servers)`);
      // Each target's steps in the group's history, named after the step and its server.
      const summaries = new Set<string>();
      for (const event of (await bosun.temporal.workflow.getHandle(`deployment-run-${runId}-batch-1-group-1`).fetchHistory()).events ?? []) {
        const summary = event.userMetadata?.summary?.data;
        if (summary) summaries.add(Buffer.from(summary).toString('utf8').replace(/^"|"$/g, ''));
      }
      expect([...summaries].filter((s) => s.startsWith('hello on')).sort()).toEqual(['hello on web-1', 'hello on web-2', 'hello on web-3']);
    } finally {
      socket.close();
    }
  });
});

describe('parameters', () => {
  test('reach the command as BOSUN_PARAM_*, never as code; secret ones are redacted and masked; bad ones are refused with nothing started', async () => {
    const deployment = await ops.define({
      server_id: servers[0],
      parameters: [{ name: 'version', required: true, pattern: '[0-9.]+' }, { name: 'note', default: 'none' }, { name: 'api_token', secret: true }],
      steps: [{ name: 'show', command: `printf '%s|' "$BOSUN_PARAM_VERSION" "$BOSUN_PARAM_NOTE"; echo "token=$BOSUN_PARAM_API_TOKEN"` }],
    });
    const evil = `$(touch ${work}/pwned) \`touch ${work}/pwned2\` "double" 'single' ; touch ${work}/pwned3\nsecond line`;
    const { run_id: runId } = await ops.triggerWith(deployment.id, { parameters: { version: '1.4.2', note: evil, api_token: 'tok-very-secret-123' } });
    const run = await ops.waitForRun(deployment.id, runId);
    expect([run.status, run.error, run.steps[0].output]).toEqual(['success', null, expect.anything()]);
    expect(run.steps[0].output).toBe(`1.4.2|${evil}|token=[redacted]\n`);
    for (const f of ['pwned', 'pwned2', 'pwned3']) expect(existsSync(`${work}/${f}`)).toBe(false);
    expect(run.parameters).toEqual({ version: '1.4.2', note: evil, api_token: '********' });
    expect(JSON.stringify(run)).not.toContain('tok-very-secret-123');
    // A one-server run is its own one target.
    expect(run.targets).toEqual([expect.objectContaining({ server_id: servers[0], title: 'web-1', status: 'success', batch: 1 })]);
    expect(run.summary).toMatchObject({ total: 1, success: 1 });

    const refuse = async (body: unknown, path: string) => {
      const res = await bosun.api.post(`/api/v1/deployments/${deployment.id}/run`).set('Authorization', `Bearer ${ops.token}`).send(body as object);
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', details: expect.arrayContaining([expect.objectContaining({ path })]) });
    };
    await refuse({}, 'parameters.version');
    await refuse({ parameters: { version: '1.0', colour: 'red' } }, 'parameters.colour');
    await refuse({ parameters: { version: '1.0; rm -rf /' } }, 'parameters.version');
    const list = await bosun.api.get(`/api/v1/deployments/${deployment.id}/runs`).set('Authorization', `Bearer ${ops.token}`);
    expect(list.body.meta.total).toBe(1);

    // The Idempotency-Key covers the parameters.
    const key = `k-${Date.now()}`;
    const first = await ops.triggerWith(deployment.id, { parameters: { version: '2.0.0' } }, key);
    const same = await ops.triggerWith(deployment.id, { parameters: { version: '2.0.0' } }, key);
    expect(same.run_id).toBe(first.run_id);
    const other = await bosun.api.post(`/api/v1/deployments/${deployment.id}/run`).set('Authorization', `Bearer ${ops.token}`).set('Idempotency-Key', key).send({ parameters: { version: '2.0.1' } });
    expect(other.status).toBe(409);
    await ops.waitForRun(deployment.id, first.run_id);
  });
});
