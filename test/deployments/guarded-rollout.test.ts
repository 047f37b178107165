import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';

/*
 * A guarded rollout end to end on real sshd: six "servers" (the test sshd on six loopback
 * addresses), three batches of two, a canary gate, a health check, and rollback steps. Every step
 * leaves a marker named after the address it ran on, so what ran — and what was rolled back — where,
 * and in which order, is read from the disk.
 */

const ADDRESSES = [2, 3, 4, 5, 6, 7].map((n) => `127.0.0.${n}`);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let admin: User;
let carol: User & { id: string };
let alice: User & { id: string };
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'guarded');
  for (const [i, host] of ADDRESSES.entries()) await admin.addServer({ host, title: `web-${i + 1}`, tags: ['web'] });
  carol = await addPerson(bosun, admin, 'Carol', 'deployer');
  alice = await addPerson(bosun, admin, 'Alice', 'approver');
  work = sharedFolder('bosun-guarded-');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, alice]) user?.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A rollout whose steps leave `<tag>-released-<address>`, whose check fails where `<tag>-down-<address>` exists, and whose rollback leaves `<tag>-rolled-back-<address>` (with its reason) and notes its order. */
const rollout = (tag: string, extra: { gates?: object[]; automatic?: boolean } = {}) => ({
  targets: { tags: ['web'] },
  strategy: {
    batch_size: 2,
    ...(extra.gates ? { gates: extra.gates } : {}),
    health_check: { command: `${HERE}; if [ -e ${work}/${tag}-down-$here ]; then echo "503 from $here"; exit 22; fi; echo ok`, retries: 1, interval_seconds: 1 },
  },
  steps: [{ name: 'release', command: `${HERE}; touch ${work}/${tag}-released-$here; echo released` }],
  rollback: {
    automatic: extra.automatic ?? true,
    steps: [{ name: 'restore', command: `${HERE}; echo "$BOSUN_ROLLBACK_REASON" > ${work}/${tag}-rolled-back-$here; echo "$here" >> ${work}/${tag}-order` }],
  },
});
const on = (tag: string, what: string) => ADDRESSES.filter((address) => existsSync(`${work}/${tag}-${what}-${address}`));
const order = (tag: string) => readFileSync(`${work}/${tag}-order`, 'utf8').split('\n').filter(Boolean);
const statuses = (run: { targets: Array<{ title: string; status: string }> }) => run.targets.map((t) => `${t.title}:${t.status}`);

test('canary, gate, approval; a health check fails on one server of batch 2: the run halts and rolls back exactly the four servers it touched, newest batch first', async () => {
  writeFileSync(`${work}/canary-down-127.0.0.5`, '');
  const deployment = await carol.define(rollout('canary', { gates: [{ before_batch: 2, approvals: 1 }] }));
  expect(deployment.rollback).toEqual({ automatic: true, steps: [expect.objectContaining({ name: 'restore' })] });
  const { run_id: runId } = await carol.trigger(deployment.id);

  await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
  expect(on('canary', 'released')).toEqual(ADDRESSES.slice(0, 2));
  const self = await carol.decide(deployment.id, runId, 'approve', {});
  expect(self.status).toBe(403);
  expect((await alice.decide(deployment.id, runId, 'approve', { comment: 'canary fine' })).status).toBe(200);

  const run = await carol.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run.status).toBe('failed');
  expect(statuses(run)).toEqual(['web-1:success', 'web-2:success', 'web-3:success', 'web-4:failed', 'web-5:skipped', 'web-6:skipped']);
  expect(run.targets[3].error).toMatch(/^Health check ".*" failed on web-4 after 2 attempts: exit code 22: 503 from 127\.0\.0\.5$/);
  expect(run.error).toMatch(/^1 of 6 targets failed \(more than the 0 allowed: later batches skipped\); first: Health check .*; rolled back on 4 of 4 touched servers$/);
  expect(run.rollback).toMatchObject({ status: 'success', touched: 4, succeeded: 4, failed: 0, summary: 'rolled back on 4 of 4 touched servers', requested_by: null });
  // Nobody asked for it: the rollback and its end are Bosun's decisions in the audit trail.
  const decisions = await eventually(
    () => admin.request('get', `/audit?run=${runId}&actor_type=system&action=run.*`).then((r) => r.body.data as Array<Record<string, any>>),
    (list) => list.length === 2,
  );
  expect(decisions.reverse()).toEqual([
    expect.objectContaining({ action: 'run.rollback', actor: { type: 'system', id: null, name: 'automatic rollback' }, target: { kind: 'run', id: runId }, outcome: 'ok', details: { reason: expect.stringMatching(/^1 of 6 targets failed/), touched: 4 } }),
    expect.objectContaining({ action: 'run.finish_rollback', outcome: 'ok', details: { summary: 'rolled back on 4 of 4 touched servers', succeeded: 4, failed: [] } }),
  ]);

  // Exactly the servers the run touched; batch 2's before batch 1's; each told why.
  expect(on('canary', 'released')).toEqual(ADDRESSES.slice(0, 4));
  expect(on('canary', 'rolled-back')).toEqual(ADDRESSES.slice(0, 4));
  expect(order('canary').slice(0, 2).sort()).toEqual(ADDRESSES.slice(2, 4));
  expect(order('canary').slice(2).sort()).toEqual(ADDRESSES.slice(0, 2));
  expect(readFileSync(`${work}/canary-rolled-back-127.0.0.2`, 'utf8')).toMatch(/^1 of 6 targets failed .*first: Health check/);
  expect(run.targets.map((t: { rollback: { status: string } | null }) => t.rollback?.status ?? null)).toEqual(['success', 'success', 'success', 'success', null, null]);
  // A rollback run reads like any run: its steps and their logs.
  const rollbackRun = await carol.getRun(deployment.id, run.targets[0].rollback.run_id);
  expect(rollbackRun).toMatchObject({ status: 'success', steps: [{ name: 'restore', status: 'success' }] });
  // The deployment's run list and its last run are the rollout's, not its rollbacks'.
  const runs = (await carol.request('get', `/deployments/${deployment.id}/runs`)).body;
  expect(runs.data.map((r: { id: string }) => r.id)).toEqual([runId]);
  expect((await carol.getDeployment(deployment.id)).last_run_status).toBe('failed');
});

test('a rejected gate rolls back the canary only; the error says who rejected, why, and the rollback', async () => {
  const deployment = await carol.define(rollout('rejected', { gates: [{ before_batch: 2, approvals: 1 }] }));
  const { run_id: runId } = await carol.trigger(deployment.id);
  await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
  expect((await alice.decide(deployment.id, runId, 'reject', { reason: 'errors on the canary' })).status).toBe(200);
  const run = await carol.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run).toMatchObject({ status: 'failed', error: 'approval rejected by Alice: errors on the canary; rolled back on 2 of 2 touched servers' });
  expect(on('rejected', 'rolled-back')).toEqual(ADDRESSES.slice(0, 2));
  expect(readFileSync(`${work}/rejected-rolled-back-127.0.0.3`, 'utf8')).toBe('approval rejected by Alice: errors on the canary\n');
});

test('rollback.automatic false: the run fails without one; POST …/rollback runs it on request, once', async () => {
  writeFileSync(`${work}/manual-down-127.0.0.2`, '');
  const deployment = await carol.define(rollout('manual', { automatic: false }));
  const run = await carol.runToEnd(deployment.id, 120_000);
  expect([run.status, run.rollback, on('manual', 'rolled-back')]).toEqual(['failed', null, []]);

  const asked = await carol.request('post', `/deployments/${deployment.id}/runs/${run.id}/rollback`, { reason: 'web-1 returns 503' });
  expect(asked.status).toBe(202);
  const rolled = await carol.waitForRun(deployment.id, run.id, (r) => r.rollback?.status === 'success', 120_000);
  expect(rolled.rollback).toMatchObject({ touched: 2, succeeded: 2, requested_by: { name: 'Carol' }, summary: 'rolled back on 2 of 2 touched servers' });
  expect(on('manual', 'rolled-back')).toEqual(ADDRESSES.slice(0, 2));
  expect(readFileSync(`${work}/manual-rolled-back-127.0.0.2`, 'utf8')).toBe('rollback asked by Carol: web-1 returns 503\n');
  const again = await carol.request('post', `/deployments/${deployment.id}/runs/${run.id}/rollback`, {});
  expect([again.status, again.body.error.message]).toEqual([409, expect.stringContaining('rolled back already')]);
  // Approvers do not run things: a rollback is deployments:run's.
  expect((await alice.request('post', `/deployments/${deployment.id}/runs/${run.id}/rollback`, {})).status).toBe(403);
});
