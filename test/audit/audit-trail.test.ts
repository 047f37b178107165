import { createHash, randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken, type User } from '../support/client';

type Json = any;
const n = () => randomBytes(3).toString('hex');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the audit trail: who did what, and every command Bosun ran', () => {
  let bosun: Bosun;
  let admin: string;
  let ops: User;
  let db: MongoClient;
  let server: string;

  const get = (token: string, path: string) => bosun.api.get(`/api/v1${path}`).set(bearer(token));
  const post = (token: string, path: string, body?: object) => bosun.api.post(`/api/v1${path}`).set(bearer(token)).send(body ?? {});
  /** The trail's entries matching `query`, once `done` holds of them. */
  const entries = (token: string, query: string, done: (list: Json[]) => boolean = (list) => list.length > 0) =>
    eventually(async () => ((await get(token, `/audit?per_page=100&${query}`)).body.data ?? []) as Json[], done);
  const trail = () => db.db().collection('audit');

  beforeAll(async () => {
    bosun = await startBosun();
    admin = await bosun.token('acme');
    ops = userWithToken(bosun, admin);
    db = await MongoClient.connect(bosun.mongoUri);
    server = await ops.addServer();
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await bosun?.stop();
  });

  test('a deployment’s commands are recorded with their redacted text, its SHA-256, the exit code, run and step; the trigger with its actor', async () => {
    const secret = `s3cret-${n()}-${n()}`;
    expect((await bosun.api.put('/api/v1/secrets/AUDIT_TOKEN').set(bearer(admin)).send({ value: secret })).status).toBe(200);
    const deployment = await ops.defineDeployment(server, [
      { name: 'greet', command: `echo hello ${secret}` },
      { name: 'fail', command: 'exit 3' },
    ]);
    const run = await ops.runToEnd(deployment.id);
    expect(run.status).toBe('failed');

    const commands = await entries(admin, `action=command.run&server=${server}`, (list) => list.filter((e) => e.details.run_id === run.id && e.outcome !== 'pending').length === 2);
    const greet = commands.find((e) => e.details.step_name === 'greet')!;
    expect(greet).toMatchObject({
      action: 'command.run',
      server_id: server,
      target: { kind: 'server', id: server },
      outcome: 'ok',
      actor: { type: 'system' },
      details: { run_id: run.id, step: 0, command: 'echo hello [redacted]', command_sha256: sha256('echo hello [redacted]'), exit_code: 0 },
    });
    expect(commands.find((e) => e.details.step_name === 'fail')).toMatchObject({ outcome: 'failed', details: { command: 'exit 3', exit_code: 3 } });
    // The secret is nowhere in the trail, nor in its export.
    const exported = await get(admin, '/audit/export');
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toContain('application/x-ndjson');
    expect(exported.text).not.toContain(secret);

    const [trigger] = await entries(admin, 'action=run.trigger', (list) => list.some((e) => e.details.created_id === run.id));
    expect(trigger).toMatchObject({ actor: { type: 'service_account', token_id: expect.any(String) }, target: { kind: 'deployment', id: deployment.id }, outcome: 'ok', source_address: expect.any(String) });
  });

  test('a command’s end that MongoDB refuses is not dropped: its step’s activity fails and is retried until the trail takes it', async () => {
    const outbox = db.db().collection('audit_pending');
    const deployment = await ops.defineDeployment(server, [{ name: 'refused-end', command: 'echo refused' }]);
    // For a while MongoDB takes a command's entry but refuses its end: only pending command entries may be written.
    await db.db().command({ collMod: 'audit_pending', validator: { $or: [{ action: { $ne: 'command.run' } }, { outcome: 'pending' }] } });
    let runId: string;
    try {
      runId = (await ops.trigger(deployment.id)).run_id;
      // The step's result is stored (its end in the trail was refused beside it); the entry is still pending.
      await ops.waitForRun(deployment.id, runId, (run) => run.steps[0].status === 'success');
      expect(await outbox.findOne({ action: 'command.run', 'details.run_id': runId })).toMatchObject({ outcome: 'pending' });
    } finally {
      await db.db().command({ collMod: 'audit_pending', validator: {} });
    }
    // Retried, the activity writes the end it could not: the entry has its exit, not `unknown` an hour later.
    const [entry] = await entries(admin, `run=${runId}&action=command.run`);
    expect(entry).toMatchObject({ outcome: 'ok', details: { step_name: 'refused-end', exit_code: 0 } });
    expect((await ops.waitForRun(deployment.id, runId)).status).toBe('success');
  });

  test('what Bosun did by itself is filtered by actor_type=system; an actor type that is none is a 422', async () => {
    const deployment = await ops.defineDeployment(server, [{ name: 'mine', command: 'true' }]);
    const run = await ops.runToEnd(deployment.id);
    const own = await entries(admin, `run=${run.id}&actor_type=system`);
    expect(own.map((e) => [e.action, e.actor.type])).toEqual([['command.run', 'system']]);
    const people = await entries(admin, `run=${run.id}&actor_type=service_account`);
    expect(people.map((e) => e.action)).toEqual(['run.trigger']);
    const bad = await get(admin, '/audit?actor_type=robot');
    expect([bad.status, bad.body.error.details[0].path]).toEqual([422, 'actor_type']);
  });

  test('a run’s entries, by its id: its trigger and the commands it ran (a fleet run’s targets’ too); a run id that is no id is a 422', async () => {
    const second = await ops.addServer({ host: '127.0.0.3' });
    const fleet = await ops.define({ name: `fleet-${n()}`, targets: { server_ids: [server, second] }, steps: [{ name: 'hello', command: 'echo hi' }] });
    const run = await ops.runToEnd(fleet.id);
    expect(run.status).toBe('success');
    const about = await entries(admin, `run=${run.id}`, (list) => list.filter((e) => e.outcome !== 'pending').length === 3);
    expect(about.map((e) => [e.action, e.server_id]).sort()).toEqual([['command.run', second], ['command.run', server], ['run.trigger', null]].sort());
    // The earlier test's run's commands on the same server, minutes before, are not among them.
    const bad = await get(admin, '/audit?run=nope');
    expect([bad.status, bad.body.error.details]).toEqual([422, [{ path: 'run', message: 'must be a run id' }]]);
  });

  test('Bosun’s own commands are recorded: the fingerprint at verification, the kill of a step’s command past its timeout', async () => {
    const [fingerprint] = await entries(admin, `action=command.run&server=${server}`, (list) => list.some((e) => e.details.purpose === 'fingerprint' && e.outcome !== 'pending'))
      .then((list) => list.filter((e) => e.details.purpose === 'fingerprint'));
    expect(fingerprint).toMatchObject({
      outcome: 'ok',
      actor: { type: 'system' },
      target: { kind: 'server', id: server },
      details: { purpose: 'fingerprint', verification_id: expect.any(String), attempt: 1, command: expect.stringContaining('uname -r'), exit_code: 0 },
    });
    expect(fingerprint.details.command_sha256).toBe(sha256(fingerprint.details.command));

    const deployment = await ops.defineDeployment(server, [{ name: 'hang', command: 'sleep 60', timeout_seconds: 1 }]);
    const run = await ops.runToEnd(deployment.id);
    expect(run.status).toBe('failed');
    const about = await entries(admin, `run=${run.id}&action=command.run`, (list) => list.length === 2 && list.every((e) => e.outcome !== 'pending'));
    const [kill, hang] = [about.find((e) => e.details.purpose === 'stop_process_group'), about.find((e) => !e.details.purpose)];
    expect(hang).toMatchObject({ outcome: 'timed_out', details: { step: 0, step_name: 'hang', command: 'sleep 60' } });
    expect(kill).toMatchObject({ outcome: 'ok', server_id: server, details: { run_id: run.id, step: 0, step_name: 'hang', command: expect.stringMatching(/^kill -TERM -\d+ /), exit_code: 0 } });
  });

  test('a conversation’s commands are recorded with their step', async () => {
    const conversation = await ops.converse(server, 'show uptime');
    const step = conversation.steps.find((s: Json) => s.command);
    const [entry] = await entries(admin, `action=command.run&server=${server}`, (list) => list.some((e) => e.details.conversation_id === conversation.id && e.outcome !== 'pending'));
    expect(entry).toMatchObject({ details: { conversation_id: conversation.id, step_id: step.id, command: step.command, command_sha256: sha256(step.command), exit_code: 0 }, outcome: 'ok' });
  });

  test('a schedule’s tick is recorded as the schedule, running as its service account, with its run', async () => {
    const deployment = await ops.defineDeployment(server, [{ name: 'tick', command: 'echo tick' }]);
    const schedule = (await post(admin, `/deployments/${deployment.id}/schedules`, { name: `nightly-${n()}`, every: '24h', time_zone: 'UTC', paused: true })).body.data;
    expect((await post(admin, `/deployments/${deployment.id}/schedules/${schedule.id}/trigger`)).status).toBe(202);
    const [tick] = await entries(admin, 'action=schedule.tick', (list) => list.some((e) => e.actor.id === schedule.id && e.outcome === 'ok'));
    expect(tick).toMatchObject({
      actor: { type: 'schedule', id: schedule.id, name: schedule.name, run_as: { id: expect.any(String), name: expect.any(String) } },
      target: { kind: 'deployment', id: deployment.id },
      details: { schedule_id: schedule.id, run_id: expect.any(String), requested_by: expect.objectContaining({ name: expect.any(String) }) },
    });
    // The person's run-now is its own entry; the run's commands follow, as every command does.
    await entries(admin, 'action=schedule.trigger', (list) => list.some((e) => e.target.id === schedule.id && e.outcome === 'ok'));
    await entries(admin, 'action=command.run', (list) => list.some((e) => e.details.run_id === tick.details.run_id));
  });

  test('refused writes are recorded with their error code; an unknown query field is a 422', async () => {
    const refused = await post(admin, '/freezes', { name: '' });
    expect(refused.status).toBe(422);
    await entries(admin, 'action=freeze.create', (list) => list.some((e) => e.outcome === 'validation_failed'));
    const bad = await get(admin, '/audit?colour=red');
    expect([bad.status, bad.body.error.code, bad.body.error.details]).toEqual([422, 'validation_failed', [{ path: 'colour', message: expect.stringContaining('colour') }]]);
    expect((await get(admin, '/audit?since=yesterday')).status).toBe(422);
    expect((await post(admin, '/audit/verify', { checkpoint: { seq: 'x' } })).status).toBe(422);
  });

  test('an auditor reads, exports and verifies the trail and does nothing else; another organization’s entries are invisible', async () => {
    const auditor = (await post(admin, '/service-accounts', { name: `auditor-${n()}` })).body.data.id;
    expect((await post(admin, '/role-bindings', { role: 'auditor', subject: { type: 'service_account', id: auditor } })).status).toBe(201);
    const token = (await post(admin, `/service-accounts/${auditor}/tokens`, { name: `t-${n()}` })).body.data.token as string;

    expect((await get(token, '/audit')).status).toBe(200);
    expect((await get(token, '/audit/export')).status).toBe(200);
    expect((await post(token, '/audit/verify')).body).toMatchObject({ ok: true, first_broken: null });
    expect((await get(token, '/servers')).status).toBe(403);
    expect((await get(token, '/deployments')).status).toBe(403);
    expect((await post(token, '/freezes', { name: 'x', starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' })).status).toBe(403);
    // Its refused write is itself in the trail, as it.
    await entries(admin, `actor=${auditor}&action=freeze.create`, (list) => list.some((e) => e.outcome === 'forbidden'));

    // A viewer may not read the trail.
    const viewer = (await post(admin, '/service-accounts', { name: `viewer-${n()}` })).body.data.id;
    await post(admin, '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: viewer } });
    const viewerToken = (await post(admin, `/service-accounts/${viewer}/tokens`, { name: `t-${n()}` })).body.data.token as string;
    expect((await get(viewerToken, '/audit')).status).toBe(403);

    const other = await bosun.token('globex');
    await post(other, '/freezes', { name: `globex-${n()}`, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' });
    await entries(other, 'action=freeze.create');
    const mine = (await get(token, '/audit?per_page=100&action=freeze.create')).body.data as Json[];
    expect(mine.every((e) => !String(e.details.route).includes('globex'))).toBe(true);
    const theirs = (await get(other, '/audit?per_page=100')).body.data as Json[];
    const ours = new Set(((await get(admin, '/audit?per_page=100')).body.data as Json[]).map((e) => e.hash));
    expect(theirs.some((e) => ours.has(e.hash))).toBe(false);
    expect(theirs.every((e) => e.actor.name !== auditor)).toBe(true);
  });

  test('sign-ins to the console and refused sign-ins are recorded', async () => {
    const signIn = await bosun.api.post('/api/v1/session').send({ token: admin });
    expect(signIn.status).toBe(201);
    await entries(admin, 'action=session.sign_in', (list) => list.some((e) => e.outcome === 'ok' && e.details.method === 'token' && e.actor.session_id));
    const revoked = await post(admin, '/tokens', { name: `gone-${n()}`, scopes: ['read'] });
    await bosun.api.delete(`/api/v1/tokens/${revoked.body.data.id}`).set(bearer(admin));
    expect((await bosun.api.post('/api/v1/session').send({ token: revoked.body.data.token })).status).toBe(401);
    await entries(admin, 'action=session.sign_in', (list) => list.some((e) => e.outcome === 'unauthorized' && e.target.id === revoked.body.data.id));
  });

  test('verify names a changed entry, a deleted one, a reordered pair, and deleted newest entries against a checkpoint', async () => {
    const token = await bosun.token(`tamper-${n()}`);
    for (let i = 0; i < 8; i += 1) await post(token, '/freezes', { name: `f-${i}`, starts_at: '2099-01-01T00:00:00Z', ends_at: '2099-01-02T00:00:00Z' });
    const list = await entries(token, '', (l) => l.length === 8);
    const head = list[0];
    expect(head.seq).toBe(8);
    const organizationId = (await trail().findOne({ hash: head.hash }))!.organization_id as string;
    const saved = await trail().find({ organization_id: organizationId }).sort({ seq: 1 }).toArray();
    const restore = async () => {
      await trail().deleteMany({ organization_id: organizationId });
      await trail().insertMany(saved);
    };
    const verify = async (body: object = {}) => (await post(token, '/audit/verify', body)).body;
    const checkpoint = { checkpoint: { seq: head.seq, hash: head.hash } };
    expect(await verify()).toEqual({ ok: true, checked: 8, first_broken: null });
    expect(await verify(checkpoint)).toEqual({ ok: true, checked: 8, first_broken: null });
    const at = (seq: number) => ({ organization_id: organizationId, seq });

    // Changed: an entry's outcome rewritten.
    await trail().updateOne(at(3), { $set: { outcome: 'validation_failed' } });
    expect(await verify()).toMatchObject({ ok: false, checked: 2, first_broken: { seq: 3, reason: expect.stringContaining('changed') } });
    await restore();

    // Changed and re-hashed by someone who knows the scheme: the next link breaks.
    const rehashed = { ...saved[2]!, outcome: 'forbidden' };
    await trail().updateOne(at(3), { $set: { outcome: 'forbidden', hash: require('../../src/domain/audit/chain').entryHash(rehashed) } });
    expect(await verify()).toMatchObject({ ok: false, first_broken: { seq: 4, reason: expect.stringContaining('does not link') } });
    await restore();

    // Deleted from the middle.
    await trail().deleteOne(at(4));
    expect(await verify()).toMatchObject({ ok: false, checked: 3, first_broken: { seq: 4, reason: expect.stringContaining('missing') } });
    await restore();

    // Reordered: entries 5 and 6 swap places.
    await trail().updateOne(at(5), { $set: { seq: -5 } });
    await trail().updateOne(at(6), { $set: { seq: 5 } });
    await trail().updateOne(at(-5), { $set: { seq: 6 } });
    expect(await verify()).toMatchObject({ ok: false, checked: 4, first_broken: { seq: 5, reason: expect.stringContaining('reordered') } });
    await restore();
    expect((await verify()).ok).toBe(true);

    // The newest two deleted: the chain alone still holds together; the checkpoint catches it.
    await trail().deleteMany({ organization_id: organizationId, seq: { $gte: 7 } });
    expect(await verify()).toEqual({ ok: true, checked: 6, first_broken: null });
    expect(await verify(checkpoint)).toMatchObject({ ok: false, checked: 6, first_broken: { seq: 7, reason: expect.stringContaining('deleted') } });
    await restore();
    expect(await verify(checkpoint)).toMatchObject({ ok: true, checked: 8 });
  });
});
