import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';

/*
 * Guarded rollouts on the real stack: approval gates and pauses between batches. Four "servers" are
 * the test sshd on four loopback addresses; each step leaves a marker file named after the address
 * it ran on, so what ran where (and what never ran) is read from the disk.
 */

const ADDRESSES = [2, 3, 4, 5].map((n) => `127.0.0.${n}`);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let admin: User;
/** Carol triggers (and may approve, but not her own runs); Alice and Bob approve; Dave approves only on `web` servers. */
let carol: User & { id: string };
let alice: User & { id: string };
let bob: User & { id: string };
let dave: User & { id: string };
let servers: string[];
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'gates');
  servers = [];
  for (const [i, host] of ADDRESSES.entries()) servers.push(await admin.addServer({ host, title: `app-${i + 1}`, tags: i === 3 ? ['app', 'db'] : ['app', 'web'] }));
  carol = await addPerson(bosun, admin, 'Carol', 'admin');
  alice = await addPerson(bosun, admin, 'Alice', 'approver');
  bob = await addPerson(bosun, admin, 'Bob', 'approver');
  dave = await addPerson(bosun, admin, 'Dave', 'approver', ['web']);
  work = sharedFolder('bosun-gates-');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, alice, bob, dave]) user?.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A step that leaves `<tag>-<address>` behind; `held`: only once the test lets it (`let go`), so a batch runs as long as the test needs. */
const marking = (tag: string, held = false) => [
  { name: 'mark', command: `${HERE}; ${held ? `while [ ! -e ${work}/${tag}-go ]; do sleep 0.1; done; ` : ''}touch ${work}/${tag}-$here` },
];
const letGo = (tag: string) => writeFileSync(`${work}/${tag}-go`, '');
const ranOn = (tag: string) => ADDRESSES.filter((address) => existsSync(`${work}/${tag}-${address}`));
const statuses = (run: { targets: Array<{ title: string; status: string }> }) => run.targets.map((t) => `${t.title}:${t.status}`);
/** A creation's answer, once it is one (201). */
const expectCreated = (res: { status: number; body: { data: { id: string } } }) => {
  expect([res.status, res.body]).toEqual([201, expect.anything()]);
  return res.body;
};

describe('an approval gate', () => {
  test('a canary batch, then the run waits for two people; the triggerer, a service account and a second approval by the same person are refused; two approvals let it finish', async () => {
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 2, expires_in: '1h' }] }, steps: marking('canary') });
    expect(deployment.strategy).toEqual({ batch_size: 1, max_concurrency: null, max_failures: null, gates: [{ before_batch: 2, approvals: 2, expires_in: '1h' }], health_check: null });
    const { run_id: runId } = await carol.trigger(deployment.id);
    const live = await carol.subscribe(runId);

    const waiting = await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
    expect(waiting.gate).toMatchObject({ before_batch: 2, approvals_required: 2, approvals: [], outcome: null });
    expect(Date.parse(waiting.gate.expires_at) - Date.parse(waiting.gate.opened_at)).toBe(3600_000);
    expect(statuses(waiting)).toEqual(['app-1:success', 'app-2:queued', 'app-3:queued', 'app-4:queued']);
    expect(ranOn('canary')).toEqual(['127.0.0.2']);
    // The deployments list says what the run says: waiting for approval, not running.
    expect(await carol.lastRunStatus(deployment.id)).toEqual(['awaiting_approval', 'awaiting_approval']);
    // The live stream says so too, with the gate.
    expect((await live.until((e) => e.status === 'awaiting_approval')).gate).toMatchObject({ before_batch: 2, approvals_required: 2 });
    // It waits for those who may approve it: Alice and Bob, not Carol who triggered it, nor a service
    // account, nor Dave (not on app-4); and it is in progress for anyone who reads.
    expect([await alice.waitingForMe(), await bob.waitingForMe()]).toEqual([[runId], [runId]]);
    expect([await carol.waitingForMe(), await admin.waitingForMe(), await dave.waitingForMe()]).toEqual([[], [], []]);
    expect((await dave.organizationRuns('status=queued,running,awaiting_approval')).data.map((r: { id: string; deployment_name: string }) => [r.id, r.deployment_name])).toEqual([[runId, deployment.name]]);

    const self = await carol.decide(deployment.id, runId, 'approve', {});
    expect([self.status, self.body.error.code]).toEqual([403, 'self_approval']);
    const service = await admin.decide(deployment.id, runId, 'approve', {});
    expect([service.status, service.body.error.code]).toEqual([403, 'people_only']);
    // Dave may approve on web servers only; app-4 is a db server.
    const outside = await dave.decide(deployment.id, runId, 'approve', {});
    expect([outside.status, outside.body.error.details]).toEqual([403, [{ path: `servers/${servers[3]}`, message: expect.stringContaining('outside the role bindings') }]]);

    const first = await alice.decide(deployment.id, runId, 'approve', { comment: 'canary looks fine' });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ status: 'awaiting_approval', gate: { approvals: [{ by: { type: 'person', name: 'Alice' }, comment: 'canary looks fine', plan_hash: waiting.plan_hash }] } });
    const again = await alice.decide(deployment.id, runId, 'approve', {});
    expect([again.status, again.body.error.code]).toEqual([409, 'already_approved']);
    expect(ranOn('canary')).toEqual(['127.0.0.2']);
    // Alice has approved: it waits for Bob alone.
    expect([await alice.waitingForMe(), await bob.waitingForMe()]).toEqual([[], [runId]]);

    const second = await bob.decide(deployment.id, runId, 'approve', {});
    expect(second.status).toBe(200);
    const done = await carol.waitForRun(deployment.id, runId);
    expect(done).toMatchObject({ status: 'success', gate: { outcome: 'approved', approvals: [{ by: { name: 'Alice' } }, { by: { name: 'Bob' } }] } });
    expect(ranOn('canary')).toEqual(ADDRESSES);
    expect(await bob.waitingForMe()).toEqual([]);
    expect((await dave.organizationRuns('status=running,awaiting_approval')).data.map((r: { id: string }) => r.id)).not.toContain(runId);
    const late = await bob.decide(deployment.id, runId, 'approve', {});
    expect([late.status, late.body.error.code]).toEqual([409, 'not_awaiting_approval']);
  });

  test('while it waits, the run names who may approve it — people and teams whose roles cover its servers, not the triggerer, a service account, nor who approved already — and its time waiting apart from its time running', async () => {
    // Erin approves through the team release (no role of her own); the team web-approvers only on web servers (app-4 is a db server).
    const erin = expectCreated(await admin.request('post', '/people', { name: 'Erin' })).data;
    const release = expectCreated(await admin.request('post', '/teams', { name: 'release', members: [erin.id] })).data;
    const webOnly = expectCreated(await admin.request('post', '/teams', { name: 'web-approvers', members: [erin.id] })).data;
    expectCreated(await admin.request('post', '/role-bindings', { role: 'approver', subject: { type: 'team', id: release.id } }));
    expectCreated(await admin.request('post', '/role-bindings', { role: 'approver', subject: { type: 'team', id: webOnly.id }, servers: { tags: ['web'] } }));
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 2, expires_in: '1h' }] }, steps: marking('approvers') });
    const { run_id: runId } = await carol.trigger(deployment.id);

    const waiting = await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
    expect(waiting.approvers).toEqual([
      { kind: 'person', id: alice.id, name: 'Alice' },
      { kind: 'person', id: bob.id, name: 'Bob' },
      { kind: 'team', id: release.id, name: 'release' },
    ]);
    expect(waiting.waits).toEqual({ approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: { for: 'approval', since: waiting.gate.opened_at } });
    // Each rounded to whole seconds on its own while the wait goes on: their sum is the duration, give or take one.
    expect(Math.abs(waiting.running_seconds + waiting.waiting_seconds - waiting.duration_seconds)).toBeLessThanOrEqual(1);
    // Whoever reads the run is told the same (Dave, who may not approve it, too).
    expect((await dave.getRun(deployment.id, runId)).approvers).toEqual(waiting.approvers);

    expect((await alice.decide(deployment.id, runId, 'approve', {})).body.data.approvers.map((a: { name: string }) => a.name)).toEqual(['Bob', 'release']);
    const approved = await bob.decide(deployment.id, runId, 'approve', {});
    expect(approved.body.data).toMatchObject({ status: 'running', approvers: null, waits: { current: null } });
    const done = await carol.waitForRun(deployment.id, runId);
    const decidedAt = Date.parse(done.gate.approvals[1].at);
    // The wait is the gate's, from its opening to the approval that decided it; the rest of the run, running.
    expect(done.waits).toEqual({ approval_seconds: Math.round((decidedAt - Date.parse(done.gate.opened_at)) / 1000), paused_seconds: 0, frozen_seconds: 0, current: null });
    expect([done.waiting_seconds, done.running_seconds]).toEqual([done.waits.approval_seconds, done.duration_seconds - done.waits.approval_seconds]);
    const listed = (await carol.request('get', `/deployments/${deployment.id}/runs`)).body.data[0];
    expect([listed.waits, listed.running_seconds, 'approvers' in listed]).toEqual([done.waits, done.running_seconds, false]);
  });

  test('a rejection fails the run, saying who and why; no later batch starts', async () => {
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 2, gates: [{ before_batch: 2, approvals: 1 }] }, steps: marking('rejected') });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.status === 'awaiting_approval');
    const rejected = await bob.decide(deployment.id, runId, 'reject', { reason: 'error rate up on the canaries' });
    expect(rejected.status).toBe(200);
    const run = await carol.waitForRun(deployment.id, runId);
    expect(run).toMatchObject({ status: 'failed', error: 'approval rejected by Bob: error rate up on the canaries', gate: { outcome: 'rejected', rejected_by: { name: 'Bob' }, reason: 'error rate up on the canaries' } });
    expect(statuses(run)).toEqual(['app-1:success', 'app-2:success', 'app-3:skipped', 'app-4:skipped']);
    expect(ranOn('rejected')).toEqual(ADDRESSES.slice(0, 2));
  });

  test('a gate before the first batch that nobody approves expires: the run fails, nothing ran; an approval after it is 409 expired', async () => {
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { gates: [{ before_batch: 1, approvals: 1, expires_in: '2s' }] }, steps: marking('expired') });
    const { run_id: runId } = await carol.trigger(deployment.id);
    const run = await carol.waitForRun(deployment.id, runId);
    expect(run).toMatchObject({ status: 'failed', error: 'approval expired after 2s', gate: { outcome: 'expired', approvals: [] } });
    expect(run.summary).toMatchObject({ total: 4, skipped: 4 });
    expect(ranOn('expired')).toEqual([]);
    const late = await alice.decide(deployment.id, runId, 'approve', {});
    expect([late.status, late.body.error.code]).toEqual([409, 'expired']);
    // Nobody decided: SharedBosun did, and the trail says so (actor system), with the run it failed.
    const [expiry] = await eventually(
      () => admin.request('get', `/audit?run=${runId}&actor_type=system`).then((r) => r.body.data as Array<Record<string, any>>),
      (list) => list.some((e) => e.action === 'run.expire_gate'),
    );
    expect(expiry).toMatchObject({
      action: 'run.expire_gate',
      actor: { type: 'system', id: null, name: 'approval gate' },
      target: { kind: 'run', id: runId },
      outcome: 'ok',
      details: { before_batch: 1, expires_in: '2s', expires_at: run.gate.expires_at, error: 'approval expired after 2s' },
    });
  });

  test('bad gates are refused (422) and change nothing; a gate past the last batch is a plan warning and the run ignores it', async () => {
    for (const gates of [[{ before_batch: 1, approvals: 0 }], [{ before_batch: 1, approvals: 11 }], [{ before_batch: 0, approvals: 1 }], [{ before_batch: 1, approvals: 1, expires_in: 'soon' }], [{ before_batch: 2, approvals: 1 }, { before_batch: 2, approvals: 2 }]]) {
      const refused = await carol.request('post', '/deployments', { name: 'bad-gate', targets: { tags: ['app'] }, strategy: { gates }, steps: marking('never') });
      expect([JSON.stringify(gates), refused.status, refused.body.error.code]).toEqual([JSON.stringify(gates), 422, 'validation_failed']);
    }
    expect((await carol.listDeployments()).map((d: { name: string }) => d.name)).not.toContain('bad-gate');

    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 2, gates: [{ before_batch: 3, approvals: 1 }] }, steps: marking('ignored') });
    const plan = await carol.plan(deployment.id);
    expect(plan.warnings).toEqual([expect.objectContaining({ code: 'gate_ignored', message: expect.stringContaining('before batch 3') })]);
    const run = await carol.runToEnd(deployment.id);
    expect([run.status, run.gate]).toEqual(['success', null]);
  });
});

describe('a plan hash', () => {
  test('a trigger with the plan reviewed runs it; once the plan changed (a server tagged), 409 plan_changed with both hashes, and nothing starts', async () => {
    const deployment = await carol.define({ targets: { tags: ['web'] }, strategy: { batch_size: 2 }, parameters: [{ name: 'version' }, { name: 'token', secret: true }], steps: marking('hashed') });
    const body = { parameters: { version: '1.2.3', token: 's3cret' } };
    const plan = await carol.plan(deployment.id, body);
    expect(plan.plan_hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await carol.plan(deployment.id, body)).plan_hash).toBe(plan.plan_hash);
    // Another version is another plan; another secret value is not (a secret is never hashed).
    expect((await carol.plan(deployment.id, { parameters: { version: '1.2.4', token: 's3cret' } })).plan_hash).not.toBe(plan.plan_hash);
    expect((await carol.plan(deployment.id, { parameters: { version: '1.2.3', token: 'other' } })).plan_hash).toBe(plan.plan_hash);

    const { run_id: runId } = await carol.triggerWith(deployment.id, { ...body, plan_hash: plan.plan_hash });
    expect((await carol.waitForRun(deployment.id, runId)).plan_hash).toBe(plan.plan_hash);

    await admin.patchServer(servers[3]!, { tags: ['app', 'db', 'web'] });
    try {
      const refused = await carol.request('post', `/deployments/${deployment.id}/run`, { ...body, plan_hash: plan.plan_hash });
      const current = (await carol.plan(deployment.id, body)).plan_hash;
      expect([refused.status, refused.body.error]).toEqual([409, expect.objectContaining({ code: 'plan_changed', given_plan_hash: plan.plan_hash, current_plan_hash: current })]);
      expect(current).not.toBe(plan.plan_hash);
      const runs = await carol.request('get', `/deployments/${deployment.id}/runs`);
      expect(runs.body.meta.total).toBe(1);
      const malformed = await carol.request('post', `/deployments/${deployment.id}/run`, { ...body, plan_hash: 'abc' });
      expect([malformed.status, malformed.body.error.details[0].path]).toEqual([422, 'plan_hash']);
    } finally {
      await admin.patchServer(servers[3]!, { tags: ['app', 'db'] });
    }
  });
});

describe('a pause', () => {
  test('asked while a batch runs: the batch finishes, the run holds paused for 10 s with nothing started, then a resume carries it to the end', async () => {
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 2 }, steps: marking('paused', true) });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.targets.some((t: { status: string }) => t.status === 'running'));
    expect(await carol.lastRunStatus(deployment.id)).toEqual(['running', 'running']);
    const asked = await alice.decide(deployment.id, runId, 'pause', { reason: 'watching the canaries' });
    // Alice is an approver: pausing is running's business (operator and up).
    expect(asked.status).toBe(403);
    const paused = await carol.decide(deployment.id, runId, 'pause', { reason: 'watching the canaries' });
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ status: 'running', pause: { by: { name: 'Carol' }, reason: 'watching the canaries', paused_at: null } });
    const twice = await carol.decide(deployment.id, runId, 'pause', { reason: 'again' });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'conflict']);

    letGo('paused');
    const held = await carol.waitForRun(deployment.id, runId, (run) => run.status === 'paused');
    expect(statuses(held)).toEqual(['app-1:success', 'app-2:success', 'app-3:queued', 'app-4:queued']);
    expect(held.pause.paused_at).not.toBeNull();
    // Held for 10 s: the run stays paused and batch 2 never starts.
    const since = Date.now();
    await eventually(async () => Date.now() - since, (elapsed) => elapsed >= 10_000, 15_000);
    const still = await carol.getRun(deployment.id, runId);
    expect([still.status, ...statuses(still)]).toEqual(['paused', 'app-1:success', 'app-2:success', 'app-3:queued', 'app-4:queued']);
    expect(await carol.lastRunStatus(deployment.id)).toEqual(['paused', 'paused']);
    expect(ranOn('paused')).toEqual(ADDRESSES.slice(0, 2));

    // Its time paused counts apart from its time running, from the moment it was held.
    expect(still.waits).toEqual({ approval_seconds: 0, paused_seconds: 0, frozen_seconds: 0, current: { for: 'pause', since: held.pause.paused_at } });
    expect(still.waiting_seconds).toBeGreaterThanOrEqual(10);
    expect(Math.abs(still.running_seconds + still.waiting_seconds - still.duration_seconds)).toBeLessThanOrEqual(1);

    const resumed = await carol.decide(deployment.id, runId, 'resume');
    expect([resumed.status, resumed.body.data.status, resumed.body.data.pause]).toEqual([200, 'running', null]);
    expect(resumed.body.data.waits).toMatchObject({ paused_seconds: expect.any(Number), current: null });
    expect(resumed.body.data.waits.paused_seconds).toBeGreaterThanOrEqual(10);
    expect(await carol.waitForRun(deployment.id, runId)).toMatchObject({ status: 'success', summary: { success: 4 } });
    expect(ranOn('paused')).toEqual(ADDRESSES);
    const notPaused = await carol.decide(deployment.id, runId, 'resume');
    expect(notPaused.status).toBe(409);
  }, 90_000);

  test('a paused run can be cancelled: it ends cancelled, its waiting targets too', async () => {
    const deployment = await carol.define({ targets: { tags: ['app'] }, strategy: { batch_size: 2 }, steps: marking('cancelled-pause', true) });
    const { run_id: runId } = await carol.trigger(deployment.id);
    await carol.waitForRun(deployment.id, runId, (run) => run.targets.some((t: { status: string }) => t.status === 'running'));
    expect((await carol.decide(deployment.id, runId, 'pause', { reason: 'hold on' })).status).toBe(200);
    letGo('cancelled-pause');
    const held = await carol.waitForRun(deployment.id, runId, (run) => run.status === 'paused');
    await carol.cancelRun(deployment.id, runId);
    const run = await carol.waitForRun(deployment.id, runId);
    expect([run.status, ...statuses(run)]).toEqual(['cancelled', 'app-1:success', 'app-2:success', 'app-3:cancelled', 'app-4:cancelled']);
    // It waited paused until its end.
    expect(run.waits).toEqual({ approval_seconds: 0, paused_seconds: Math.round((Date.parse(run.completed_at) - Date.parse(held.pause.paused_at)) / 1000), frozen_seconds: 0, current: null });
  });
});
