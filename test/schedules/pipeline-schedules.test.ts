import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';

type Json = any;

/*
 * A pipeline's schedules on the real stack: the same documents, Temporal Schedules and ticks as a
 * deployment's, each tick a pipeline run started through the pipeline trigger as the schedule's
 * service account — refused and recorded `forbidden`, naming the stage, when that account may not
 * run a stage's deployment — and gone with their pipeline.
 */

describe('pipeline schedules', () => {
  let bosun: SharedBosun;
  let admin: User;
  let pipelineId: string;
  const deployments: Record<'build' | 'migrate', string> = { build: '', migrate: '' };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'pipeline-schedules');
    const web = await admin.addServer({ host: '127.0.0.6', title: 'ps-web', tags: ['web'] });
    const db = await admin.addServer({ host: '127.0.0.7', title: 'ps-db', tags: ['db'] });
    deployments.build = (await admin.define({ name: 'ps-build', server_id: web, parameters: [{ name: 'version', required: true }], steps: [{ name: 'build', command: 'echo "build $BOSUN_PARAM_VERSION"' }] })).id;
    deployments.migrate = (await admin.define({ name: 'ps-migrate', server_id: db, steps: [{ name: 'migrate', command: 'echo migrated' }] })).id;
    const pipeline = await admin.request('post', '/pipelines', {
      name: 'nightly-release',
      parameters: [{ name: 'version', default: 'dev' }],
      stages: [
        { name: 'build', deployment: 'ps-build', parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'migrate', deployment: 'ps-migrate', needs: ['build'] },
      ],
    });
    expect(pipeline.status).toBe(201);
    pipelineId = pipeline.body.data.id;
  }, 120_000);
  afterAll(() => bosun.stop());

  const path = (suffix = '', id = pipelineId) => `/pipelines/${id}/schedules${suffix}`;
  const create = async (body: Json, id = pipelineId) => {
    const res = await admin.request('post', path('', id), body);
    if (res.status !== 201) throw new Error(`schedule a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const firstTick = (scheduleId: string) =>
    eventually(
      async () => (await admin.request('get', path(`/${scheduleId}/ticks`))).body.data as Json[],
      (ticks) => ticks.length > 0,
      90_000,
    ).then((ticks) => ticks[0]);

  test('a schedule on a pipeline: its Temporal Schedule, its next runs, in the organization’s list by the pipeline’s name', async () => {
    const schedule = await create({ name: 'nightly', cron: '0 3 * * *', time_zone: 'Europe/Berlin', parameters: { version: '7' } });
    expect(schedule).toMatchObject({ pipeline_id: pipelineId, deployment_id: null, name: 'nightly', cron: '0 3 * * *', parameters: { version: '7' }, run_as: { type: 'service_account' } });
    expect(schedule.next_runs).toHaveLength(10);
    expect(schedule.next_runs[0].local).toMatch(/T03:00:00\+0[12]:00$/);
    const described = await bosun.temporal.schedule.getHandle(`bosun-schedule-${schedule.id}`).describe();
    expect((described.action as { args?: Json[] }).args?.[0]).toMatchObject({ scheduleId: schedule.id, pipelineId, deploymentId: null });
    expect((await admin.request('get', path(`/${schedule.id}`))).body.data).toMatchObject({ id: schedule.id, pipeline_id: pipelineId });
    expect((await admin.request('get', path())).body.data.map((s: Json) => s.id)).toContain(schedule.id);

    // A name is unique per pipeline; a deployment (or another pipeline) may have a schedule of the same name.
    const again = await admin.request('post', path(), { name: 'nightly', every: '1h', time_zone: 'UTC' });
    expect([again.status, again.body.error.message]).toEqual([409, 'The pipeline already has a schedule named "nightly"']);
    const ofDeployment = await admin.request('post', `/deployments/${deployments.migrate}/schedules`, { name: 'nightly', every: '1h', time_zone: 'UTC', paused: true });
    expect(ofDeployment.status).toBe(201);

    const listed = (await admin.request('get', '/schedules?per_page=100')).body.data as Json[];
    expect(listed.find((s) => s.id === schedule.id)).toMatchObject({ pipeline_id: pipelineId, pipeline_name: 'nightly-release', deployment_name: null });
    expect(listed.find((s) => s.id === ofDeployment.body.data.id)).toMatchObject({ deployment_id: deployments.migrate, deployment_name: 'ps-migrate', pipeline_name: null });
  });

  test('bad input is refused with 422 naming the field: a parameter the pipeline does not take, a service account that may not run it', async () => {
    const unknown = await admin.request('post', path(), { name: 'bad', every: '1h', time_zone: 'UTC', parameters: { nope: 'x' } });
    expect([unknown.status, unknown.body.error.details.map((d: Json) => d.path)]).toEqual([422, ['parameters.nope']]);
    // A deployment's schedule names it the same way (it said `parameters.parameters.nope` before).
    const ofDeployment = await admin.request('post', `/deployments/${deployments.build}/schedules`, { name: 'bad', every: '1h', time_zone: 'UTC', parameters: { version: '1', nope: 'x' } });
    expect([ofDeployment.status, ofDeployment.body.error.details.map((d: Json) => d.path)]).toEqual([422, ['parameters.nope']]);
    const account = (await admin.request('post', '/service-accounts', { name: 'web-only-bot' })).body.data;
    await admin.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: account.id }, servers: { tags: ['web'] } });
    await admin.request('post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account.id } });
    const refused = await admin.request('post', path(), { name: 'bad', every: '1h', time_zone: 'UTC', run_as: account.id });
    expect([refused.status, refused.body.error.details[0].path]).toEqual([422, 'run_as']);
    expect(refused.body.error.details[0].message).toMatch(/web-only-bot may not run this pipeline: .*stage "migrate"/);
    expect((await admin.request('get', '/pipelines/000000000000000000000000/schedules')).status).toBe(404);
  });

  test('a tick starts a pipeline run as the schedule’s service account, with the schedule on the run and its parameters in the stages', async () => {
    const schedule = await create({ name: 'on-demand', every: '24h', time_zone: 'UTC', parameters: { version: '42' } });
    const asked = await admin.request('post', path(`/${schedule.id}/trigger`));
    expect(asked.status).toBe(202);
    const tick = await firstTick(schedule.id);
    expect(tick).toMatchObject({ outcome: 'fired', skipped: false, scheduled_at: asked.body.scheduled_at, run_id: expect.any(String) });
    const run = await eventually(async () => (await admin.request('get', `/pipelines/${pipelineId}/runs/${tick.run_id}`)).body.data, (r) => ['success', 'failed', 'cancelled'].includes(r.status), 90_000);
    expect(run).toMatchObject({ status: 'success', pipeline_id: pipelineId, schedule: { id: schedule.id, name: 'on-demand', scheduled_at: asked.body.scheduled_at }, actor: { type: 'service_account' } });
    const build = run.stages.find((s: Json) => s.name === 'build');
    expect((await admin.getRun(deployments.build, build.deployment_run_id)).steps[0].output).toBe('build 42\n');
  }, 120_000);

  test('a tick whose service account may not run one stage’s deployment is recorded forbidden, naming the stage; no pipeline run starts', async () => {
    const account = (await admin.request('post', '/service-accounts', { name: 'release-bot' })).body.data;
    const everywhere = (await admin.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: account.id } })).body.data;
    const schedule = await create({ name: 'as-bot', every: '24h', time_zone: 'UTC', run_as: account.id });
    expect(schedule.run_as).toMatchObject({ id: account.id, name: 'release-bot' });
    // Now it may run what is on the web servers only (and read everything).
    expect((await admin.request('delete', `/role-bindings/${everywhere.id}`)).status).toBe(204);
    await admin.request('post', '/role-bindings', { role: 'operator', subject: { type: 'service_account', id: account.id }, servers: { tags: ['web'] } });
    await admin.request('post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account.id } });
    const runsBefore = (await admin.request('get', `/pipelines/${pipelineId}/runs`)).body.meta.total;

    expect((await admin.request('post', path(`/${schedule.id}/trigger`))).status).toBe(202);
    const tick = await firstTick(schedule.id);
    expect(tick).toMatchObject({ outcome: 'forbidden', skipped: true, run_id: null });
    expect(tick.message).toMatch(/^release-bot \(the service account it runs as\) may not run this pipeline now: .*[Ss]tage "migrate"/);
    expect((await admin.request('get', `/pipelines/${pipelineId}/runs`)).body.meta.total).toBe(runsBefore);
  }, 120_000);

  test('overlap is about pipeline runs: a run-now while the last tick’s pipeline run waits at a gate is refused (skip); the tick’s workflow ends with that run', async () => {
    const gated = await admin.request('post', '/pipelines', { name: 'gated-release', stages: [{ name: 'prod', deployment: 'ps-migrate', gate: { approvals: 1 } }] });
    const gatedId = gated.body.data.id as string;
    const schedule = await create({ name: 'gated', every: '24h', time_zone: 'UTC' }, gatedId);
    const asked = await admin.request('post', path(`/${schedule.id}/trigger`, gatedId));
    expect(asked.status).toBe(202);
    const tick: Json = await eventually(async () => (await admin.request('get', path(`/${schedule.id}/ticks`, gatedId))).body.data[0], Boolean, 60_000);
    await eventually(async () => (await admin.request('get', `/pipelines/${gatedId}/runs/${tick.run_id}`)).body.data.status, (status) => status === 'awaiting_approval', 60_000);

    const again = await admin.request('post', path(`/${schedule.id}/trigger`, gatedId));
    expect([again.status, again.body.error.code, again.body.error.run_ids]).toEqual([409, 'overlap', [tick.run_id]]);

    expect((await admin.request('post', `/pipelines/${gatedId}/runs/${tick.run_id}/cancel`)).status).toBe(202);
    const workflow = bosun.temporal.workflow.getHandle(`bosun-schedule-${schedule.id}-now-${asked.body.scheduled_at}`);
    expect(await workflow.result()).toMatchObject({ outcome: 'fired', runId: tick.run_id, runStatus: 'cancelled' });
  }, 120_000);

  test('deleting the pipeline deletes its schedules and their Temporal Schedules', async () => {
    const other = await admin.request('post', '/pipelines', { name: 'short-lived', stages: [{ name: 'only', deployment: 'ps-migrate' }] });
    const doomed = await create({ name: 'nightly', every: '1h', time_zone: 'UTC' }, other.body.data.id);
    const handle = bosun.temporal.schedule.getHandle(`bosun-schedule-${doomed.id}`);
    await handle.describe();
    expect((await admin.request('delete', `/pipelines/${other.body.data.id}`)).status).toBe(204);
    await expect(handle.describe()).rejects.toThrow();
    expect((await admin.request('get', '/schedules?per_page=100')).body.data.map((s: Json) => s.id)).not.toContain(doomed.id);
  });
});
