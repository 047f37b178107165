import { randomBytes } from 'node:crypto';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { asUser, personToken, type User } from '../support/client';

type Json = any;

/*
 * Defining a pipeline (docs/pipelines.md, "Define"): the release of issue 37 as six deployments and
 * six stages, read, listed, changed and deleted; every problem of a definition named at once; who
 * sees a pipeline; a deployment a pipeline runs cannot be deleted.
 */

/** The six deployments of the release: the build writes `artifact` to $BOSUN_OUTPUT, the others take it. */
const DEPLOYMENTS = [
  { name: 'web-build', parameters: [{ name: 'version', required: true }], command: 'echo "artifact=web-$BOSUN_PARAM_VERSION.tgz" >> "$BOSUN_OUTPUT"' },
  { name: 'web-staging', parameters: [{ name: 'artifact', required: true }], command: 'echo "staging $BOSUN_PARAM_ARTIFACT"' },
  { name: 'web-prod-eu', parameters: [{ name: 'artifact', required: true }], command: 'echo "eu $BOSUN_PARAM_ARTIFACT"' },
  { name: 'web-prod-us', parameters: [{ name: 'artifact', required: true }], command: 'echo "us $BOSUN_PARAM_ARTIFACT"' },
  { name: 'announce', parameters: [{ name: 'message', default: 'released' }], command: 'echo "$BOSUN_PARAM_MESSAGE"' },
  { name: 'cleanup', parameters: [{ name: 'artifact' }], command: 'echo cleaned' },
];

/** The example, word for word. */
const RELEASE = {
  name: 'web-release',
  parameters: [{ name: 'version', required: true }],
  stages: [
    { name: 'build', deployment: 'web-build', parameters: { version: '${{ pipeline.parameters.version }}' } },
    { name: 'staging', deployment: 'web-staging', needs: ['build'], parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
    { name: 'prod-eu', deployment: 'web-prod-eu', needs: ['staging'], gate: { approvals: 1, expires_in: '24h' }, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
    { name: 'prod-us', deployment: 'web-prod-us', needs: ['staging'], gate: { approvals: 1 }, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
    { name: 'announce', deployment: 'announce', needs: ['prod-eu', 'prod-us'] },
    { name: 'cleanup', deployment: 'cleanup', needs: ['announce'], when: 'always' },
  ],
};

const n = () => randomBytes(3).toString('hex');
const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);

describe('pipeline definitions', () => {
  let bosun: SharedBosun;
  let admin: User;
  /** The organization's servers (never reached: a definition only names them), by tag. */
  const servers: Record<'web' | 'db', string> = { web: '', db: '' };
  /** The release's deployments' ids, by name. */
  const ids: Record<string, string> = {};

  const call = (token: string, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) => {
    const request = bosun.api[method](`/api/v1${path}`).set(bearer(token));
    return body ? request.send(body) : request;
  };
  const define = (body: object, token = admin.token) => call(token, 'post', '/pipelines', body);
  const created = async (body: object, token = admin.token) => {
    const res = await define(body, token);
    if (res.status !== 201) throw new Error(`define a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Json;
  };
  const problems = async (res: { status: number; body: Json }) => {
    expect([res.status, res.body.error?.code]).toEqual([422, 'validation_failed']);
    return [...res.body.error.details].sort(byPath);
  };
  const deployment = async (name: string, scope: 'web' | 'db', parameters: object[], command: string) => {
    const res = await call(admin.token, 'post', '/deployments', { name, server_id: servers[scope], parameters, steps: [{ name: 'do', command }] });
    if (res.status !== 201) throw new Error(`define ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'pipes');
    for (const [i, tag] of (['web', 'db'] as const).entries()) {
      // A server at a port nothing listens on: defining deployments on it needs only that it exists.
      const res = await call(admin.token, 'post', '/servers', { title: `${tag}-1`, host: `127.0.9.${i + 1}`, port: 1, username: 'deploy', auth_method: 'password', password: 'pw', tags: [tag] });
      if (res.status !== 201) throw new Error(`add a server: ${res.status} ${JSON.stringify(res.body)}`);
      servers[tag] = res.body.data.id;
    }
    for (const d of DEPLOYMENTS) ids[d.name] = await deployment(d.name, 'web', d.parameters, d.command);
  });
  afterAll(() => bosun.stop());

  test('the release of the issue: defined, read, listed a page at a time, changed and deleted; its definition is in the audit trail', async () => {
    const res = await define(RELEASE);
    expect(res.status).toBe(201);
    const release = res.body.data;
    expect(res.headers.location).toBe(`/api/v1/pipelines/${release.id}`);
    // Every output the stages read is written by a step of the build: nothing to warn of.
    expect(res.body.warnings).toEqual([]);
    expect(release).toEqual({
      id: expect.any(String),
      name: 'web-release',
      description: null,
      parameters: [{ name: 'version', description: null, default: null, required: true, secret: false, pattern: null }],
      stages: [
        { name: 'build', deployment: { id: ids['web-build'], name: 'web-build' }, needs: [], when: 'success', gate: null, parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'staging', deployment: { id: ids['web-staging'], name: 'web-staging' }, needs: ['build'], when: 'success', gate: null, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
        { name: 'prod-eu', deployment: { id: ids['web-prod-eu'], name: 'web-prod-eu' }, needs: ['staging'], when: 'success', gate: { approvals: 1, expires_in: '24h' }, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
        { name: 'prod-us', deployment: { id: ids['web-prod-us'], name: 'web-prod-us' }, needs: ['staging'], when: 'success', gate: { approvals: 1, expires_in: '24h' }, parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
        { name: 'announce', deployment: { id: ids.announce, name: 'announce' }, needs: ['prod-eu', 'prod-us'], when: 'success', gate: null, parameters: {} },
        { name: 'cleanup', deployment: { id: ids.cleanup, name: 'cleanup' }, needs: ['announce'], when: 'always', gate: null, parameters: {} },
      ],
      created_by: expect.objectContaining({ type: 'service_account' }),
      updated_by: expect.objectContaining({ type: 'service_account' }),
      managed_by: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call(admin.token, 'get', `/pipelines/${release.id}`)).body.data).toEqual(release);

    // A second one, by the deployments' ids: the list is newest first, a page at a time.
    const hotfix = await created({ name: 'hotfix', parameters: [{ name: 'version', required: true }], stages: [{ name: 'build', deployment: ids['web-build'], parameters: { version: '${{ pipeline.parameters.version }}' } }] });
    expect(hotfix.stages[0].deployment).toEqual({ id: ids['web-build'], name: 'web-build' });
    const first = await call(admin.token, 'get', '/pipelines?per_page=1');
    expect([first.body.meta, first.body.data.map((p: Json) => p.name)]).toEqual([{ current_page: 1, per_page: 1, total: 2, last_page: 2 }, ['hotfix']]);
    const second = await call(admin.token, 'get', '/pipelines?per_page=1&page=2');
    expect(second.body.data).toEqual([release]);
    expect((await call(admin.token, 'get', '/pipelines?per_page=0')).status).toBe(422);

    // A change: a description, and prod-us waits for two people; the rest as it was.
    const stages = RELEASE.stages.map((s) => (s.name === 'prod-us' ? { ...s, gate: { approvals: 2, expires_in: '2h' } } : s));
    const patched = await call(admin.token, 'patch', `/pipelines/${release.id}`, { description: 'web, region by region', stages });
    expect([patched.status, patched.body.warnings]).toEqual([200, []]);
    expect(patched.body.data).toMatchObject({ name: 'web-release', description: 'web, region by region' });
    expect(patched.body.data.stages.map((s: Json) => s.gate)).toEqual([null, null, { approvals: 1, expires_in: '24h' }, { approvals: 2, expires_in: '2h' }, null, null]);
    expect((await call(admin.token, 'get', `/pipelines/${release.id}`)).body.data).toEqual(patched.body.data);
    expect((await call(admin.token, 'patch', `/pipelines/${release.id}`, {})).status).toBe(422);
    expect((await call(admin.token, 'patch', `/pipelines/${release.id}`, { name: 'hotfix' })).status).toBe(409);

    const entries = await eventually(
      async () => (await call(admin.token, 'get', '/audit?action=pipeline.*&per_page=100')).body.data as Json[],
      (list) => list.filter((e) => e.outcome !== 'pending').length >= 5,
    );
    expect(entries.find((e) => e.action === 'pipeline.create' && e.target?.id === release.id)).toMatchObject({ outcome: 'ok', details: { route: 'POST /api/v1/pipelines' } });
    // The change, and the refused ones (the empty body, the name taken).
    expect(entries.filter((e) => e.action === 'pipeline.update').map((e) => [e.target.id, e.outcome]).sort()).toEqual([[release.id, 'conflict'], [release.id, 'ok'], [release.id, 'validation_failed']]);

    expect((await call(admin.token, 'delete', `/pipelines/${hotfix.id}`)).status).toBe(204);
    expect((await call(admin.token, 'get', `/pipelines/${hotfix.id}`)).status).toBe(404);
    expect((await call(admin.token, 'get', '/pipelines')).body.meta.total).toBe(1);
    expect((await call(admin.token, 'delete', `/pipelines/${release.id}`)).status).toBe(204);
  });

  test('names are unique in the organization (409)', async () => {
    const body = { name: `twice-${n()}`, stages: [{ name: 'one', deployment: 'announce' }] };
    await created(body);
    expect((await define(body)).body.error).toMatchObject({ code: 'conflict', message: `A pipeline named "${body.name}" already exists in this organization` });
  });

  test('every problem of a definition is named at once, each by its path and its stage', async () => {
    const res = await define({
      name: 'broken',
      colour: 'blue',
      parameters: [{ name: 'version', required: true }],
      stages: [
        { name: 'build', deployment: 'web-build', parameters: { version: '${{ pipeline.parameters.release }}', flavour: 'mint' } },
        { name: 'staging', deployment: 'web-stagin', needs: ['build', 'qa'], parameters: { artifact: '${{ stages.build.outputs.artifact }}' } },
        { name: 'prod-eu', deployment: 'web-prod-eu', needs: ['cleanup'], gate: { approvals: 11, expires_in: 'soon' }, parameters: { artifact: '${{ stages.nowhere.outputs.artifact }}' } },
        { name: 'prod-us', deployment: 'web-prod-us', needs: ['build'], when: 'sometimes' },
        { name: 'prod-us', deployment: 'announce' },
        { name: 'smoke test', deployment: 'announce', color: 'red', parameters: { message: '${{ env.HOME }}' } },
        { name: 'cleanup', deployment: 'cleanup', needs: ['build'], when: 'failure', parameters: { artifact: '${{ stages.staging.outputs.artifact }}' } },
      ],
    });
    expect(await problems(res)).toEqual([
      { path: 'colour', message: 'Unknown field: colour' },
      { path: 'stages.0.parameters.flavour', message: 'stage "build": deployment "web-build" has no parameter "flavour" (it declares "version")' },
      { path: 'stages.0.parameters.version', message: 'stage "build": ${{ pipeline.parameters.release }} names no parameter of the pipeline (it declares "version")' },
      { path: 'stages.1.deployment', message: 'stage "staging": no deployment "web-stagin" in this organization' },
      { path: 'stages.1.needs.1', message: 'stage "staging": needs "qa", which is no stage of this pipeline' },
      { path: 'stages.2.gate.approvals', message: 'approvals is at most 10' },
      { path: 'stages.2.gate.expires_in', message: expect.stringContaining('a duration') },
      { path: 'stages.2.needs.0', message: 'stage "prod-eu": needs "cleanup", which is defined later: a stage needs only stages above it' },
      { path: 'stages.2.parameters.artifact', message: 'stage "prod-eu": ${{ stages.nowhere.outputs.artifact }} names no stage of this pipeline' },
      { path: 'stages.3.parameters', message: 'stage "prod-us": deployment "web-prod-us" requires parameter "artifact", which is not set' },
      { path: 'stages.3.when', message: 'when is one of "success", "failure", "always"' },
      { path: 'stages.4.name', message: 'stage "prod-us": stages.3 has this name too: stage names are unique' },
      { path: 'stages.5', message: 'Unknown field: color' },
      { path: 'stages.5.name', message: expect.stringContaining('a stage name is letters, digits, _ and -') },
      { path: 'stages.5.parameters.message', message: expect.stringMatching(/^stage "smoke test": "\$\{\{ env\.HOME \}\}" is not an expression Bosun knows/) },
      { path: 'stages.6.parameters.artifact', message: 'stage "cleanup": ${{ stages.staging.outputs.artifact }} reads stage "staging", which this stage does not need (directly or through its needs): add it to needs' },
    ]);
    expect((await call(admin.token, 'get', '/pipelines?per_page=100')).body.data.map((p: Json) => p.name)).not.toContain('broken');
  });

  test('a cycle is named: a stage that needs itself, or needs a later stage that needs it back', async () => {
    const stage = (name: string, needs: string[]) => ({ name, deployment: 'announce', needs });
    expect(await problems(await define({ name: 'selfish', stages: [stage('a', ['a'])] }))).toEqual([{ path: 'stages.0.needs.0', message: 'stage "a": needs itself (a cycle a → a)' }]);
    expect(await problems(await define({ name: 'loop', stages: [stage('a', ['c']), stage('b', ['a']), stage('c', ['b'])] }))).toEqual([
      { path: 'stages.0.needs.0', message: 'stage "a": needs "c", which needs it back: a cycle a → c → b → a' },
    ]);
  });

  test('at most 50 stages; a stage `when: failure` needs a stage to fail', async () => {
    const stages = Array.from({ length: 51 }, (_, i) => ({ name: `s${i}`, deployment: 'announce', needs: i ? [`s${i - 1}`] : [] }));
    expect(await problems(await define({ name: 'long', stages }))).toEqual([{ path: 'stages', message: 'at most 50 stages' }]);
    expect((await define({ name: `fifty-${n()}`, stages: stages.slice(0, 50) })).status).toBe(201);
    expect(await problems(await define({ name: 'orphan', stages: [{ name: 'a', deployment: 'announce', when: 'failure' }] }))).toEqual([
      { path: 'stages.0.when', message: 'stage "a": when "failure" runs after a stage it needs failed, and it needs none' },
    ]);
  });

  test('a secret parameter of a stage’s deployment is given by an expression, never stored in the definition; a value is held to its pattern', async () => {
    await deployment('with-secret', 'web', [{ name: 'token', secret: true }, { name: 'region', pattern: 'eu|us' }], 'true');
    const stage = (parameters: object) => ({ name: `s-${n()}`, stages: [{ name: 'one', deployment: 'with-secret', parameters }] });
    expect(await problems(await define(stage({ token: 'hunter2', region: 'asia' })))).toEqual([
      { path: 'stages.0.parameters.region', message: 'stage "one": the value of "region" does not match the pattern eu|us of deployment "with-secret"' },
      { path: 'stages.0.parameters.token', message: expect.stringContaining('stage "one": "token" is a secret parameter of deployment "with-secret": give it by an expression') },
    ]);
    const accepted = await define({ ...stage({ token: '${{ pipeline.parameters.token }}', region: 'eu' }), parameters: [{ name: 'token', secret: true }] });
    expect(accepted.status).toBe(201);
  });

  test('an output no step of its stage’s deployment mentions is accepted with a warning (outputs are known only when a run writes them)', async () => {
    const res = await define({
      name: `digest-${n()}`,
      parameters: [{ name: 'version', required: true }],
      stages: [
        { name: 'build', deployment: 'web-build', parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'staging', deployment: 'web-staging', needs: ['build'], parameters: { artifact: 'web-${{ stages.build.outputs.digest }}.tgz' } },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual([
      {
        path: 'stages.1.parameters.artifact',
        message: 'stage "staging": no step of deployment "web-build" (stage "build") mentions both BOSUN_OUTPUT and "digest": the output is looked for when the pipeline runs, and a missing one fails this stage',
      },
    ]);
  });

  test('a change is judged with what it leaves: a parameter the stages read cannot be taken away', async () => {
    const release = await created({ ...RELEASE, name: `release-${n()}` });
    expect(await problems(await call(admin.token, 'patch', `/pipelines/${release.id}`, { parameters: [] }))).toEqual([
      { path: 'stages.0.parameters.version', message: 'stage "build": ${{ pipeline.parameters.version }} names no parameter of the pipeline (it declares none)' },
    ]);
    expect((await call(admin.token, 'get', `/pipelines/${release.id}`)).body.data.parameters).toHaveLength(1);
  });

  test('a deployment a pipeline runs cannot be deleted: 409 naming the pipeline, until the pipeline is gone', async () => {
    const doomed = await deployment(`doomed-${n()}`, 'web', [], 'true');
    const pipeline = await created({ name: `uses-doomed-${n()}`, stages: [{ name: 'only', deployment: doomed }] });
    const refused = await call(admin.token, 'delete', `/deployments/${doomed}`);
    expect([refused.status, refused.body.error]).toEqual([409, { code: 'conflict', message: `Pipeline "${pipeline.name}" runs this deployment in a stage: change or delete it first` }]);
    expect((await call(admin.token, 'delete', `/pipelines/${pipeline.id}`)).status).toBe(204);
    expect((await call(admin.token, 'delete', `/deployments/${doomed}`)).status).toBe(204);
  });

  test('another organization sees none of it: 404 by id, an empty list, and its deployments are no stage’s', async () => {
    const release = await created({ ...RELEASE, name: `private-${n()}` });
    const stranger = await bosun.token('pipes-stranger');
    expect((await call(stranger, 'get', '/pipelines')).body.meta.total).toBe(0);
    expect((await call(stranger, 'get', `/pipelines/${release.id}`)).status).toBe(404);
    expect((await call(stranger, 'patch', `/pipelines/${release.id}`, { name: 'mine' })).status).toBe(404);
    expect((await call(stranger, 'delete', `/pipelines/${release.id}`)).status).toBe(404);
    expect(await problems(await define({ name: 'mine', stages: [{ name: 'a', deployment: 'web-build' }, { name: 'b', deployment: ids['web-staging']! }] }, stranger))).toEqual([
      { path: 'stages.0.deployment', message: 'stage "a": no deployment "web-build" in this organization' },
      { path: 'stages.1.deployment', message: `stage "b": no deployment "${ids['web-staging']}" in this organization` },
    ]);
    expect((await call(admin.token, 'get', `/pipelines/${release.id}`)).body.data.name).toBe(release.name);
  });

  test('a person who may not read one stage’s deployment does not see the pipeline; one who may read but not write it cannot define it (403 naming the stage)', async () => {
    const db = await deployment(`db-migrate-${n()}`, 'db', [], 'true');
    const both = await created({ name: `web-and-db-${n()}`, stages: [{ name: 'web', deployment: 'announce' }, { name: 'db', deployment: db, needs: ['web'] }] });
    const webOnly = await created({ name: `web-only-${n()}`, stages: [{ name: 'web', deployment: 'announce' }] });

    const { token: webDeployer } = await personToken(admin, `Wendy${n()}`, 'deployer', ['web']);
    const listed = (await call(webDeployer, 'get', '/pipelines?per_page=100')).body.data.map((p: Json) => p.id);
    expect([listed.includes(webOnly.id), listed.includes(both.id)]).toEqual([true, false]);
    expect((await call(webDeployer, 'get', `/pipelines/${webOnly.id}`)).status).toBe(200);
    expect((await call(webDeployer, 'get', `/pipelines/${both.id}`)).status).toBe(404);
    expect((await call(webDeployer, 'delete', `/pipelines/${both.id}`)).status).toBe(404);
    expect(await problems(await define({ name: `sneaky-${n()}`, stages: [{ name: 'db', deployment: db }] }, webDeployer))).toEqual([
      { path: 'stages.0.deployment', message: `stage "db": no deployment "${db}" in this organization` },
    ]);

    // Reads everything, defines on web servers only.
    const reader = await personToken(admin, `Rita${n()}`, 'viewer');
    expect((await admin.request('post', '/role-bindings', { role: 'deployer', subject: { type: 'person', id: reader.id }, servers: { tags: ['web'] } })).status).toBe(201);
    expect((await call(reader.token, 'get', `/pipelines/${both.id}`)).status).toBe(200);
    const refused = await define({ name: `reach-${n()}`, stages: [{ name: 'web', deployment: 'announce' }, { name: 'db', deployment: db }] }, reader.token);
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([403, 'forbidden', expect.stringMatching(/^stage "db": /)]);
    expect((await call(reader.token, 'patch', `/pipelines/${both.id}`, { description: 'mine' })).status).toBe(403);
    expect((await call(reader.token, 'patch', `/pipelines/${webOnly.id}`, { description: 'ours' })).status).toBe(200);
  });
});
