import mongoose from 'mongoose';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { inTransaction } from '../../src/domain/database';
import { authenticateToken, type Principal } from '../../src/domain/tokens/service';
import { ScheduleWorkflows } from '../../src/domain/temporal/schedules';
import { loadNames, type PlannedName } from '../../src/api/config/names';
import { deploymentKind } from '../../src/api/config/kinds/deployment';
import { pipelineKind } from '../../src/api/config/kinds/pipeline';
import { scheduleKind } from '../../src/api/config/kinds/schedule';
import type { CheckContext, CurrentObject, KindAdapter, ManagedBy } from '../../src/domain/config/types';

type Json = any;

/*
 * The Deployment, Pipeline and Schedule adapters of config as code (issue 38), on the real stack:
 * objects made through the HTTP API read back as canonical specs that check to themselves; a spec
 * written in a transaction reads back through the API as the API-made one does; every problem of a
 * spec at once, at its path; references to planned objects; what holds a prune.
 */

describe('config kinds: Deployment, Pipeline, Schedule', () => {
  let bosun: SharedBosun;
  let admin: User;
  let principal: Principal;
  let org: string;
  let web: string;
  let db: string;
  let kinds: { deployment: KindAdapter; pipeline: KindAdapter; schedule: KindAdapter };
  const ids: Record<string, string> = {};

  const managedBy = (path: string): ManagedBy => ({ source: 'platform-repo', revision: '3f2a1c0', path, url: null, applied_at: new Date(), spec_hash: 'f'.repeat(64), forced_at: null, forced_by: null });
  const currentOf = async (adapter: KindAdapter, name: string, planned: PlannedName[] = []) => (await adapter.current(org, await loadNames(org, planned))).find((o) => o.name === name)!;
  const contextFor = async (current: CurrentObject | null = null, planned: PlannedName[] = [], secrets: string[] = []): Promise<CheckContext> => ({
    organizationId: org,
    names: await loadNames(org, planned),
    secrets: new Set(secrets),
    current,
  });
  /** Writes specs as an apply does: one transaction, names over the planned creations. */
  const apply = async (adapter: KindAdapter, objects: Array<{ id?: string; name: string; spec: Record<string, unknown>; existing?: boolean }>, planned: PlannedName[] = []) => {
    const names = await loadNames(org, planned);
    const written = objects.map((o) => ({ id: o.id ?? new mongoose.Types.ObjectId().toString(), name: o.name, spec: o.spec, existing: o.existing ?? false, managed_by: managedBy(`${o.name}.yaml`) }));
    await inTransaction(async (session) => {
      for (const object of written) await adapter.write({ organizationId: org, session, names, principal, now: new Date() }, object);
    });
    await adapter.afterApply?.(org, { written: written.map((o) => o.id), removed: [] });
    return written.map((o) => o.id);
  };
  const prune = async (adapter: KindAdapter, id: string) => {
    const names = await loadNames(org);
    await inTransaction((session) => adapter.remove({ organizationId: org, session, names, principal, now: new Date() }, id));
    await adapter.afterApply?.(org, { written: [], removed: [id] });
  };
  /** A view as another object's would be: what differs between two objects of the same definition left out. */
  const definitionOf = ({ id: _id, name: _name, created_at: _c, updated_at: _u, managed_by: _m, ...rest }: Json) => rest;
  const get = async (path: string) => {
    const res = await admin.request('get', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const made = async (path: string, body: Json) => {
    const res = await admin.request('post', path, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    await mongoose.connect(bosun.mongoUri);
    const token = await bosun.token('kinds-a');
    admin = await asUser(bosun, 'kinds-a', token);
    principal = (await authenticateToken(token)) as Principal;
    org = principal.organizationId;
    const schedules = new ScheduleWorkflows(bosun.temporal, bosun.taskQueue);
    kinds = { deployment: deploymentKind({ schedules }), pipeline: pipelineKind({ schedules }), schedule: scheduleKind({ schedules, minIntervalSeconds: 60 }) };
    web = await admin.addServer({ host: '127.0.0.2', title: 'ka-web', tags: ['web'] });
    db = await admin.addServer({ host: '127.0.0.3', title: 'ka-db', tags: ['db'] });
    ids.one = (await made('/deployments', {
      name: 'one',
      server_id: web,
      parameters: [
        { name: 'version', required: true, pattern: '[0-9.]+' },
        { name: 'token', secret: true, description: 'the registry token' },
        { name: 'env', default: 'prod' },
      ],
      steps: [
        { name: 'check', command: '[ "$BOSUN_PARAM_TOKEN" = "s3cret-t0ken" ] && echo "token matches"', timeout_seconds: 30, retries: 1, continue_on_error: true },
        { name: 'done', command: 'true' },
      ],
    })).id;
    ids.fleet = (await made('/deployments', {
      name: 'fleet',
      targets: { server_ids: [db, web], tags: ['web'] },
      strategy: { batch_size: '50%', max_failures: 1, gates: [{ before_batch: 2, approvals: 1 }], health_check: { command: 'true', soak_seconds: 5 } },
      rollback: { steps: [{ name: 'undo', command: 'echo undo' }], automatic: false },
      steps: [{ name: 'roll', command: 'echo roll' }],
    })).id;
    ids.tagged = (await made('/deployments', { name: 'tagged', targets: { tags: ['db'] }, strategy: {}, steps: [{ name: 'a', command: 'true' }] })).id;
    ids.release = (await made('/pipelines', {
      name: 'release',
      description: 'build, then roll out',
      parameters: [{ name: 'version', default: '1.0' }],
      stages: [
        { name: 'build', deployment: 'one', parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'roll', deployment: 'fleet', needs: ['build'], when: 'always', gate: { approvals: 1 } },
      ],
    })).id;
    const bot = await made('/service-accounts', { name: 'ka-bot' });
    ids.bot = bot.id;
    expect((await admin.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: bot.id } })).status).toBe(201);
    ids.nightly = (await made(`/deployments/${ids.one}/schedules`, { name: 'nightly', cron: '30  2 * * 1-5', time_zone: 'Europe/Berlin', parameters: { version: '2.1' }, overlap: 'buffer_one', jitter: '5m', note: 'weekdays', run_as: bot.id })).id;
    ids.hourly = (await made(`/pipelines/${ids.release}/schedules`, { name: 'hourly', every: '1h', time_zone: 'UTC', paused: true, run_as: bot.id })).id;
  }, 180_000);
  afterAll(async () => {
    await mongoose.disconnect();
    await bosun.stop();
  });

  test('deployments made through the API read back as canonical specs, references by name, that check to themselves', async () => {
    const fleet = await currentOf(kinds.deployment, 'fleet');
    expect(JSON.stringify(fleet.spec)).toBe(JSON.stringify({
      targets: { servers: ['ka-db', 'ka-web'], tags: ['web'] },
      strategy: { batch_size: '50%', max_failures: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '24h' }], health_check: { command: 'true', soak_seconds: 5, timeout_seconds: 10, retries: 0, interval_seconds: 5 } },
      rollback: { steps: [{ name: 'undo', command: 'echo undo', retries: 0, continue_on_error: false }], automatic: false },
      steps: [{ name: 'roll', command: 'echo roll', retries: 0, continue_on_error: false }],
    }));
    expect(fleet).toMatchObject({ id: ids.fleet, name: 'fleet', managed_by: null });
    const one = await currentOf(kinds.deployment, 'one');
    expect(one.spec).toMatchObject({ server: 'ka-web', parameters: [{ name: 'version', required: true, secret: false, pattern: '[0-9.]+' }, { name: 'token', description: 'the registry token', required: false, secret: true }, { name: 'env', default: 'prod', required: false, secret: false }] });
    for (const name of ['one', 'fleet', 'tagged']) {
      const current = await currentOf(kinds.deployment, name);
      const checked = await kinds.deployment.check(current.spec, await contextFor(current));
      expect(checked.problems).toEqual([]);
      expect(JSON.stringify(checked.spec)).toBe(JSON.stringify(current.spec));
    }
  });

  test('a deployment written in a transaction reads back through the API as the one made through it, and is replaced whole', async () => {
    const copies = await Promise.all(['one', 'fleet', 'tagged'].map(async (name) => ({ name: `${name}-copy`, spec: (await currentOf(kinds.deployment, name)).spec })));
    const written = await apply(kinds.deployment, copies);
    for (const [i, name] of ['one', 'fleet', 'tagged'].entries()) {
      const copy = await get(`/deployments/${written[i]}`);
      expect(copy.name).toBe(`${name}-copy`);
      expect(definitionOf(copy)).toEqual(definitionOf(await get(`/deployments/${ids[name]}`)));
    }
    const stored = await mongoose.connection.db!.collection('deployments').findOne({ _id: new mongoose.Types.ObjectId(written[0]) });
    expect(stored!.managed_by).toMatchObject({ source: 'platform-repo', revision: '3f2a1c0', path: 'one-copy.yaml', forced_at: null });

    // One server becomes targets: the other kind is cleared, the creation time kept.
    const before = await get(`/deployments/${written[0]}`);
    await apply(kinds.deployment, [{ id: written[0], name: 'one-copy', existing: true, spec: { targets: { tags: ['db'] }, steps: [{ name: 'x', command: 'true' }] } }]);
    const after = await get(`/deployments/${written[0]}`);
    expect(after).toMatchObject({ server_id: null, targets: { server_ids: [], tags: ['db'] }, parameters: [], strategy: null, rollback: null, steps: [{ name: 'x', command: 'true', timeout_seconds: null, retries: 0, continue_on_error: false }], created_at: before.created_at });
  });

  test('a deployment spec: every problem at once, at its path in the file’s names', async () => {
    // Two servers titled alike: a title names neither.
    expect((await admin.request('patch', `/servers/${db}`, { title: 'ka-web' })).status).toBe(200);
    try {
      const checked = await kinds.deployment.check(
        { server: 'nope', targets: { servers: ['ka-web', 'missing'] }, strategy: { batch_size: 0 }, steps: [{ name: 'a', command: 'true', timeout_seconds: 90000 }], colour: 'blue' },
        await contextFor(),
      );
      expect(checked.spec).toBeNull();
      expect(checked.problems).toEqual(expect.arrayContaining([
        { path: [], message: 'Unknown field: colour' },
        { path: ['steps', 0, 'timeout_seconds'], message: expect.stringMatching(/86400/) },
        { path: ['strategy', 'batch_size'], message: expect.any(String) },
        { path: ['targets'], message: 'give server (one server) or targets (many), not both' },
        { path: ['server'], message: 'no server titled "nope"' },
        { path: ['targets', 'servers', 0], message: 'more than one server is titled "ka-web": retitle one, or target them by tags' },
        { path: ['targets', 'servers', 1], message: 'no server titled "missing"' },
      ]));
      expect((await kinds.deployment.check({ steps: [{ name: 'a', command: 'true' }] }, await contextFor())).problems).toEqual([{ path: ['server'], message: 'give server (one server) or targets (many)' }]);
    } finally {
      expect((await admin.request('patch', `/servers/${db}`, { title: 'ka-db' })).status).toBe(200);
    }
  });

  test('pipelines: canonical specs that check to themselves, written as the API writes them; the stages checked together; deployments of the same files', async () => {
    const release = await currentOf(kinds.pipeline, 'release');
    expect(JSON.stringify(release.spec)).toBe(JSON.stringify({
      description: 'build, then roll out',
      parameters: [{ name: 'version', default: '1.0', required: false, secret: false }],
      stages: [
        { name: 'build', deployment: 'one', needs: [], when: 'success', parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'roll', deployment: 'fleet', needs: ['build'], when: 'always', gate: { approvals: 1, expires_in: '24h' }, parameters: {} },
      ],
    }));
    const checked = await kinds.pipeline.check(release.spec, await contextFor(release));
    expect(JSON.stringify(checked.spec)).toBe(JSON.stringify(release.spec));

    const [copyId] = await apply(kinds.pipeline, [{ name: 'release-copy', spec: release.spec }]);
    const copy = await get(`/pipelines/${copyId}`);
    expect(definitionOf(copy)).toEqual(definitionOf(await get(`/pipelines/${ids.release}`)));
    expect(copy.created_by).toMatchObject({ type: principal.identity.type, id: principal.identity.id });

    // Checked against its deployments as the same apply wrote them: refused, the whole transaction rolled back.
    const stage = { name: 'build', deployment: 'one', needs: [], when: 'success', parameters: { nope: 'x', token: 'in-clear' } };
    await expect(apply(kinds.pipeline, [{ name: 'ok', spec: release.spec }, { name: 'bad-stage', spec: { stages: [stage] } }])).rejects.toThrow(
      'stages.0.parameters.nope: stage "build": deployment "one" has no parameter "nope" (it declares "version", "token", "env"); stages.0.parameters.token: stage "build": "token" is a secret parameter of deployment "one": give it by an expression (${{ pipeline.parameters.NAME }}), never stored in the definition; stages.0.parameters: stage "build": deployment "one" requires parameter "version", which is not set',
    );
    expect((await kinds.pipeline.current(org, await loadNames(org))).map((p) => p.name)).toEqual(['release', 'release-copy']);

    const broken = await kinds.pipeline.check(
      { stages: [{ name: 'a', deployment: 'ghost', needs: ['b'] }, { name: 'b', deployment: 'planned', needs: ['a'], parameters: { v: '${{ pipeline.parameters.nope }}' } }] },
      await contextFor(null, [{ kind: 'Deployment', name: 'planned', id: new mongoose.Types.ObjectId().toString() }]),
    );
    expect(broken.problems).toEqual([
      { path: ['stages', 0, 'needs', 0], message: 'stage "a": needs "b", which needs it back: a cycle a → b → a' },
      { path: ['stages', 1, 'parameters', 'v'], message: 'stage "b": ${{ pipeline.parameters.nope }} names no parameter of the pipeline (it declares none)' },
      { path: ['stages', 0, 'deployment'], message: 'no deployment named "ghost" (in the files or the organization)' },
    ]);
  });

  test('schedules: canonical specs naming what they run and as whom, written as the API writes them with their Temporal Schedules', async () => {
    const nightly = await currentOf(kinds.schedule, 'nightly');
    expect(JSON.stringify(nightly.spec)).toBe(JSON.stringify({
      deployment: 'one', cron: '30 2 * * 1-5', time_zone: 'Europe/Berlin', parameters: { version: '2.1' }, overlap: 'buffer_one', catch_up_window: '5m', jitter: '5m', paused: false, note: 'weekdays', run_as: 'ka-bot',
    }));
    const hourly = await currentOf(kinds.schedule, 'hourly');
    expect(hourly.spec).toMatchObject({ pipeline: 'release', every: '1h', paused: true, run_as: 'ka-bot' });
    for (const current of [nightly, hourly]) expect(JSON.stringify((await kinds.schedule.check(current.spec, await contextFor(current))).spec)).toBe(JSON.stringify(current.spec));

    const [nightlyCopy, hourlyCopy] = await apply(kinds.schedule, [{ name: 'nightly-copy', spec: nightly.spec }, { name: 'hourly-copy', spec: hourly.spec }]);
    const sameAs = async (copyId: string, path: string, originalId: string) => {
      const [copy, original] = [await get(`${path}/${copyId}`), await get(`${path}/${originalId}`)];
      // Jitter moves each next run at random: only how many there are compares.
      const { pause: copyPause, created_by: _c, updated_by: _u, next_runs: copyRuns, ...copyRest } = definitionOf(copy);
      const { pause: originalPause, created_by: _oc, updated_by: _ou, next_runs: originalRuns, ...originalRest } = definitionOf(original);
      expect(copyRest).toEqual(originalRest);
      expect(copyRuns.length).toBe(originalRuns.length);
      expect(copyPause === null).toBe(originalPause === null);
      expect(copy.created_by).toMatchObject({ id: principal.identity.id });
    };
    await sameAs(nightlyCopy!, `/deployments/${ids.one}/schedules`, ids.nightly!);
    await sameAs(hourlyCopy!, `/pipelines/${ids.release}/schedules`, ids.hourly!);
    const temporal = await bosun.temporal.schedule.getHandle(`bosun-schedule-${nightlyCopy}`).describe();
    expect(temporal.state.paused).toBe(false);

    // Paused by the files: the Temporal Schedule follows after the apply.
    await apply(kinds.schedule, [{ id: nightlyCopy, name: 'nightly-copy', existing: true, spec: { ...nightly.spec, paused: true } }]);
    expect((await get(`/deployments/${ids.one}/schedules/${nightlyCopy}`)).pause).toMatchObject({ at: expect.any(String), note: 'weekdays' });
    expect((await bosun.temporal.schedule.getHandle(`bosun-schedule-${nightlyCopy}`).describe()).state.paused).toBe(true);

    await prune(kinds.schedule, nightlyCopy!);
    expect((await admin.request('get', `/deployments/${ids.one}/schedules/${nightlyCopy}`)).status).toBe(404);
    await expect(bosun.temporal.schedule.getHandle(`bosun-schedule-${nightlyCopy}`).describe()).rejects.toThrow();
  });

  test('a schedule’s secret parameter is a ${secret:NAME} reference: checked against the organization’s secrets, shown as written, resolved at the tick', async () => {
    const spec = { deployment: 'one', every: '24h', time_zone: 'UTC', parameters: { version: '3', token: '${secret:REGISTRY_TOKEN}' }, run_as: 'ka-bot' };
    expect((await kinds.schedule.check(spec, await contextFor())).problems).toEqual([{ path: ['parameters', 'token'], message: 'no organization secret named "REGISTRY_TOKEN" (PUT /api/v1/secrets/REGISTRY_TOKEN)' }]);
    expect((await admin.request('put', '/secrets/REGISTRY_TOKEN', { value: 's3cret-t0ken' })).status).toBeLessThan(300);
    const checked = await kinds.schedule.check(spec, await contextFor(null, [], ['REGISTRY_TOKEN']));
    expect(checked.problems).toEqual([]);

    await expect(apply(kinds.schedule, [{ name: 'in-clear', spec: { ...checked.spec!, parameters: { version: '3', token: 'in-clear' } } }])).rejects.toThrow(
      'schedule "in-clear": parameters.token: a secret parameter is given as ${secret:NAME} in files, never in clear',
    );
    const [id] = await apply(kinds.schedule, [{ name: 'with-secret', spec: checked.spec! }]);
    const view = await get(`/deployments/${ids.one}/schedules/${id}`);
    expect(view.parameters).toEqual({ version: '3', token: '${secret:REGISTRY_TOKEN}' });
    expect(JSON.stringify((await currentOf(kinds.schedule, 'with-secret')).spec)).toBe(JSON.stringify(checked.spec));

    expect((await admin.request('post', `/deployments/${ids.one}/schedules/${id}/trigger`)).status).toBe(202);
    const tick = await eventually(async () => (await get(`/deployments/${ids.one}/schedules/${id}/ticks`)) as Json[], (ticks) => ticks.length > 0, 90_000);
    expect(tick[0]).toMatchObject({ outcome: 'fired' });
    const finished = await eventually(async () => admin.getRun(ids.one!, tick[0].run_id), (r: Json) => ['success', 'failed'].includes(r.status), 90_000);
    expect(finished.steps[0].output).toBe('token matches\n');

    // The secret gone: the next tick starts nothing, and says which secret.
    expect((await admin.request('delete', '/secrets/REGISTRY_TOKEN')).status).toBe(204);
    expect((await admin.request('post', `/deployments/${ids.one}/schedules/${id}/trigger`)).status).toBe(202);
    const ticks = await eventually(async () => (await get(`/deployments/${ids.one}/schedules/${id}/ticks`)) as Json[], (t) => t.length > 1, 90_000);
    expect(ticks[0]).toMatchObject({ outcome: 'refused', run_id: null, message: expect.stringContaining('no organization secret named "REGISTRY_TOKEN"') });
  }, 120_000);

  test('a schedule spec: every problem at once; references to objects the same files create', async () => {
    const checked = await kinds.schedule.check(
      { deployment: 'one', pipeline: 'release', cron: '61 * * * *', every: '30s', time_zone: 'Mars/Olympus', overlap: 'sometimes', run_as: 'nobody' },
      await contextFor(),
    );
    expect(checked.problems).toEqual(expect.arrayContaining([
      { path: ['cron'], message: expect.stringMatching(/minute/) },
      { path: ['time_zone'], message: 'an IANA time zone such as "Europe/Berlin", "America/New_York" or "UTC"' },
      { path: ['overlap'], message: expect.any(String) },
      { path: ['run_as'], message: 'no service account named "nobody" (in the files or the organization)' },
    ]));
    const interval = await kinds.schedule.check({ deployment: 'one', every: '30s', time_zone: 'UTC', run_as: 'ka-bot' }, await contextFor());
    expect(interval.problems).toEqual([{ path: ['every'], message: 'an interval is at least 1 minute ("1m")' }]);
    const planned: PlannedName[] = [{ kind: 'Pipeline', name: 'next', id: new mongoose.Types.ObjectId().toString() }, { kind: 'ServiceAccount', name: 'new-bot', id: new mongoose.Types.ObjectId().toString() }];
    expect((await kinds.schedule.check({ pipeline: 'next', every: '1h', time_zone: 'UTC', run_as: 'new-bot' }, await contextFor(null, planned))).problems).toEqual([]);
    expect((await kinds.schedule.check({ every: '1h', time_zone: 'UTC' }, await contextFor())).problems).toEqual([
      { path: ['run_as'], message: 'run_as is required in files: the service account each tick runs as, by name' },
      { path: ['deployment'], message: 'give either deployment or pipeline (not both)' },
    ]);
  });

  test('prune: a deployment a staying pipeline runs, or with a run going, is held; pruned, its schedules and their Temporal Schedules go with it', async () => {
    const names = await loadNames(org);
    expect(await kinds.deployment.pruneBlocker(org, ids.fleet!, names)).toMatch(/^pipelines "release", "release-copy" run it in their stages and stay$/);
    // The pipelines pruned in the same apply hold nothing.
    expect(await kinds.deployment.pruneBlocker(org, ids.fleet!, await loadNames('000000000000000000000000'))).toBeNull();

    const [heldId] = await apply(kinds.deployment, [{ name: 'held', spec: { server: 'ka-web', steps: [{ name: 'wait', command: 'sleep 60' }] } }]);
    const { run_id } = await admin.trigger(heldId!);
    const going = await kinds.deployment.pruneBlocker(org, heldId!, names);
    expect(going).toBe('a run of it is queued or running: cancel it or let it finish first');
    await admin.cancelRun(heldId!, run_id);
    await eventually(async () => (await admin.getRun(heldId!, run_id)).status, (s) => s === 'cancelled', 60_000);
    expect(await kinds.deployment.pruneBlocker(org, heldId!, names)).toBeNull();

    const [scheduleId] = await apply(kinds.schedule, [{ name: 'of-held', spec: { deployment: 'held', every: '1h', time_zone: 'UTC', run_as: 'ka-bot' } }]);
    await bosun.temporal.schedule.getHandle(`bosun-schedule-${scheduleId}`).describe();
    await prune(kinds.deployment, heldId!);
    expect((await admin.request('get', `/deployments/${heldId}`)).status).toBe(404);
    expect(await mongoose.connection.db!.collection('schedules').countDocuments({ _id: new mongoose.Types.ObjectId(scheduleId) })).toBe(0);
    await expect(bosun.temporal.schedule.getHandle(`bosun-schedule-${scheduleId}`).describe()).rejects.toThrow();
  }, 120_000);
});
