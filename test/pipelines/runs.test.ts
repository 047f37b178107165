import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';

/*
 * Pipeline runs on the real stack: each stage a deployment run on the test sshd, "servers" on
 * loopback addresses of their own so stages on different servers may overlap. Steps leave marker
 * files in a shared folder: what ran (and what never did) is read from the disk, and a step that
 * waits for another's marker proves two stages ran at once without timing anything.
 */

const HOSTS = { build: '127.0.0.1', staging: '127.0.0.2', eu: '127.0.0.3', us: '127.0.0.4' } as const;

let bosun: SharedBosun;
let admin: User;
/** Carol triggers; Alice approves (and may run nothing herself). */
let carol: User & { id: string };
let alice: User & { id: string };
let servers: Record<keyof typeof HOSTS, string>;
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'pipeline-runs');
  const added: Partial<Record<keyof typeof HOSTS, string>> = {};
  for (const [name, host] of Object.entries(HOSTS)) added[name as keyof typeof HOSTS] = await admin.addServer({ host, title: `pr-${name}`, tags: [name === 'build' ? 'ci' : 'web'] });
  servers = added as Record<keyof typeof HOSTS, string>;
  carol = await addPerson(bosun, admin, 'Carol', 'admin');
  alice = await addPerson(bosun, admin, 'Alice', 'approver');
  work = sharedFolder('bosun-pipelines-');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, alice]) user?.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

const unique = () => Math.random().toString(36).slice(2, 8);
const mark = (name: string) => `touch ${work}/${name}`;
const marked = (name: string) => existsSync(`${work}/${name}`);

/** A one-step deployment on one of the servers; its id. */
async function deployment(server: keyof typeof HOSTS, command: string, extra: Record<string, unknown> = {}) {
  const res = await admin.request('post', '/deployments', { name: `d-${unique()}`, server_id: servers[server], steps: [{ name: 'do', command }], ...extra });
  if (res.status !== 201) throw new Error(`define a deployment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; name: string };
}

async function pipeline(body: Record<string, unknown>, as: User = admin) {
  const res = await as.request('post', '/pipelines', { name: `p-${unique()}`, ...body });
  if (res.status !== 201) throw new Error(`define a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; name: string };
}

async function trigger(pipelineId: string, body: Record<string, unknown> = {}, as: User = admin) {
  const res = await as.request('post', `/pipelines/${pipelineId}/run`, body);
  if (res.status !== 202) throw new Error(`trigger a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.run_id as string;
}

const getRun = async (pipelineId: string, runId: string, as: User = admin) => (await as.request('get', `/pipelines/${pipelineId}/runs/${runId}`)).body.data;
const waitForRun = (pipelineId: string, runId: string, done: (run: any) => boolean = (run) => ['success', 'failed', 'cancelled'].includes(run.status), timeoutMs = 90_000) =>
  eventually(() => getRun(pipelineId, runId), done, timeoutMs);
const stageStatuses = (run: { stages: Array<{ name: string; status: string }> }) => Object.fromEntries(run.stages.map((s) => [s.name, s.status]));
const stage = (run: { stages: Array<{ name: string }> }, name: string) => run.stages.find((s) => s.name === name) as any;

describe('a release pipeline', () => {
  test('the issue’s graph end to end: outputs passed on, fan-out stages at once, fan-in after both, cleanup last', async () => {
    const tag = unique();
    const build = await deployment('build', `echo "artifact=web-$BOSUN_PARAM_VERSION.tar.gz" >> "$BOSUN_OUTPUT"; ${mark(`${tag}-build`)}`, { parameters: [{ name: 'version', required: true }] });
    const staging = await deployment('staging', `test "$BOSUN_PARAM_ARTIFACT" = "web-1.4.2.tar.gz" && ${mark(`${tag}-staging`)}`, { parameters: [{ name: 'artifact', required: true }] });
    // Each prod stage marks its start, then waits for the other's: both end only if they overlapped.
    const region = (me: string, other: string) =>
      `echo "$BOSUN_PARAM_ARTIFACT" > ${work}/${tag}-${me}; for i in $(seq 300); do test -f ${work}/${tag}-${other} && exit 0; sleep 0.1; done; exit 1`;
    const eu = await deployment('eu', region('eu', 'us'), { parameters: [{ name: 'artifact', required: true }] });
    const us = await deployment('us', region('us', 'eu'), { parameters: [{ name: 'artifact', required: true }] });
    const announce = await deployment('build', `test -f ${work}/${tag}-eu && test -f ${work}/${tag}-us && ${mark(`${tag}-announce`)}`);
    const cleanup = await deployment('staging', mark(`${tag}-cleanup`));
    const artifact = '${{ stages.build.outputs.artifact }}';
    const release = await pipeline({
      parameters: [{ name: 'version', required: true }],
      stages: [
        { name: 'build', deployment: build.name, parameters: { version: '${{ pipeline.parameters.version }}' } },
        { name: 'staging', deployment: staging.name, needs: ['build'], parameters: { artifact } },
        { name: 'prod-eu', deployment: eu.id, needs: ['staging'], parameters: { artifact } },
        { name: 'prod-us', deployment: us.id, needs: ['staging'], parameters: { artifact } },
        { name: 'announce', deployment: announce.name, needs: ['prod-eu', 'prod-us'] },
        { name: 'cleanup', deployment: cleanup.name, needs: ['announce'], when: 'always' },
      ],
    });
    const runId = await trigger(release.id, { parameters: { version: '1.4.2' } });
    const run = await waitForRun(release.id, runId);
    expect(run).toMatchObject({ status: 'success', error: null, parameters: { version: '1.4.2' }, pipeline_name: release.name });
    expect(stageStatuses(run)).toEqual({ build: 'success', staging: 'success', 'prod-eu': 'success', 'prod-us': 'success', announce: 'success', cleanup: 'success' });
    expect(stage(run, 'build').outputs).toEqual({ artifact: 'web-1.4.2.tar.gz' });
    // The artifact reached both regions as BOSUN_PARAM_ARTIFACT.
    expect(readFileSync(`${work}/${tag}-eu`, 'utf8')).toBe('web-1.4.2.tar.gz\n');
    // Fan-in after both, cleanup after the fan-in: by their times.
    const at = (name: string, field: 'started_at' | 'completed_at') => Date.parse(stage(run, name)[field]);
    expect(at('announce', 'started_at')).toBeGreaterThanOrEqual(Math.max(at('prod-eu', 'completed_at'), at('prod-us', 'completed_at')));
    expect(at('cleanup', 'started_at')).toBeGreaterThanOrEqual(at('announce', 'completed_at'));
    // Each stage is a deployment run of its own, linked both ways.
    const prodRun = (await admin.request('get', `/deployments/${eu.id}/runs/${stage(run, 'prod-eu').deployment_run_id}`)).body.data;
    expect(prodRun).toMatchObject({ status: 'success', parameters: { artifact: 'web-1.4.2.tar.gz' } });
    expect(stage(run, 'prod-eu')).toMatchObject({ deployment_run_status: 'success', deployment_name: eu.name });
  });

  test('a failed stage skips what needs it, but failure and always stages run; the run fails naming the stage', async () => {
    const tag = unique();
    const build = await deployment('build', 'echo compiling; exit 3');
    const deploy = await deployment('staging', mark(`${tag}-deploy`));
    const notify = await deployment('staging', mark(`${tag}-notify`));
    const cleanup = await deployment('eu', mark(`${tag}-cleanup`));
    const release = await pipeline({
      stages: [
        { name: 'build', deployment: build.name },
        { name: 'deploy', deployment: deploy.name, needs: ['build'] },
        { name: 'verify', deployment: deploy.name, needs: ['deploy'] },
        { name: 'page-oncall', deployment: notify.name, needs: ['verify'], when: 'failure' },
        { name: 'cleanup', deployment: cleanup.name, needs: ['verify'], when: 'always' },
      ],
    });
    const run = await waitForRun(release.id, await trigger(release.id));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/^Stage "build" failed: .*exit code 3/);
    expect(stageStatuses(run)).toEqual({ build: 'failed', deploy: 'skipped', verify: 'skipped', 'page-oncall': 'success', cleanup: 'success' });
    expect(stage(run, 'deploy').error).toBe('needs build, which failed');
    expect(stage(run, 'verify').error).toBe('needs deploy, which was skipped');
    expect([marked(`${tag}-deploy`), marked(`${tag}-notify`), marked(`${tag}-cleanup`)]).toEqual([false, true, true]);
    // A failure stage after a success is skipped, saying why.
    const fine = await pipeline({ stages: [{ name: 'ok', deployment: deploy.name }, { name: 'on-failure', deployment: notify.name, needs: ['ok'], when: 'failure' }] });
    const after = await waitForRun(fine.id, await trigger(fine.id));
    expect([after.status, stageStatuses(after), stage(after, 'on-failure').error]).toEqual(['success', { ok: 'success', 'on-failure': 'skipped' }, 'none of the stages it needs failed']);
  });

  test('retry keeps the stages that succeeded, with their outputs, and runs the others', async () => {
    const tag = unique();
    const build = await deployment('build', `echo "artifact=a-${tag}" >> "$BOSUN_OUTPUT"; echo built >> ${work}/${tag}-builds`);
    // Fails the first time, succeeds once the test has fixed what it needs.
    const flaky = await deployment('staging', `test -f ${work}/${tag}-fixed && echo "$BOSUN_PARAM_ARTIFACT" > ${work}/${tag}-deployed`, { parameters: [{ name: 'artifact', required: true }] });
    const release = await pipeline({ stages: [{ name: 'build', deployment: build.name }, { name: 'deploy', deployment: flaky.name, needs: ['build'], parameters: { artifact: '${{ stages.build.outputs.artifact }}' } }] });
    const first = await waitForRun(release.id, await trigger(release.id));
    expect([first.status, stageStatuses(first)]).toEqual(['failed', { build: 'success', deploy: 'failed' }]);
    writeFileSync(`${work}/${tag}-fixed`, '');
    const retried = await admin.request('post', `/pipelines/${release.id}/runs/${first.id}/retry`);
    expect(retried.status).toBe(202);
    const second = await waitForRun(release.id, retried.body.run_id);
    expect(second).toMatchObject({ status: 'success', retry_of: first.id });
    expect(stage(second, 'build')).toMatchObject({ status: 'success', kept_from: first.id, deployment_run_id: stage(first, 'build').deployment_run_id, outputs: { artifact: `a-${tag}` } });
    expect(readFileSync(`${work}/${tag}-builds`, 'utf8')).toBe('built\n');
    expect(readFileSync(`${work}/${tag}-deployed`, 'utf8')).toBe(`a-${tag}\n`);
    // Nothing left to retry.
    expect((await admin.request('post', `/pipelines/${release.id}/runs/${second.id}/retry`)).status).toBe(409);
  });

  test('cancel stops the running stage’s command, skips what has not begun, and still runs always stages', async () => {
    const tag = unique();
    const slow = await deployment('staging', `${mark(`${tag}-began`)}; sleep 61.${Math.floor(Math.random() * 1e5)}; ${mark(`${tag}-slept`)}`);
    const next = await deployment('eu', mark(`${tag}-next`));
    const cleanup = await deployment('us', mark(`${tag}-cleanup`));
    const release = await pipeline({ stages: [{ name: 'slow', deployment: slow.name }, { name: 'next', deployment: next.name, needs: ['slow'] }, { name: 'cleanup', deployment: cleanup.name, needs: ['next'], when: 'always' }] });
    const runId = await trigger(release.id);
    await eventually(async () => marked(`${tag}-began`), Boolean);
    const cancel = await admin.request('post', `/pipelines/${release.id}/runs/${runId}/cancel`);
    expect(cancel.status).toBe(202);
    const run = await waitForRun(release.id, runId);
    expect(run.status).toBe('cancelled');
    expect(stageStatuses(run)).toEqual({ slow: 'cancelled', next: 'skipped', cleanup: 'success' });
    expect(stage(run, 'next').error).toBe('the pipeline run was cancelled');
    expect(run.cancelled_by).toMatchObject({ type: 'service_account' });
    expect(stage(run, 'slow').deployment_run_status).toBe('cancelled');
    expect([marked(`${tag}-slept`), marked(`${tag}-next`), marked(`${tag}-cleanup`)]).toEqual([false, false, true]);
    expect((await admin.request('post', `/pipelines/${release.id}/runs/${runId}/cancel`)).status).toBe(409);
  });
});

describe('a stage’s gate', () => {
  test('the triggerer and a service account may not approve; another person does, and the stage runs', async () => {
    const tag = unique();
    const prod = await deployment('eu', mark(`${tag}-prod`));
    const release = await pipeline({ stages: [{ name: 'prod', deployment: prod.name, gate: { approvals: 1, expires_in: '1h' } }] });
    const runId = await trigger(release.id, {}, carol);
    const waiting = await waitForRun(release.id, runId, (run) => run.status === 'awaiting_approval');
    expect(stage(waiting, 'prod')).toMatchObject({ status: 'awaiting_approval', deployment_run_id: null, approval: { approvals_required: 1, approvals: [], outcome: null } });
    expect(marked(`${tag}-prod`)).toBe(false);
    const path = `/pipelines/${release.id}/runs/${runId}/stages/prod/approve`;
    const self = await carol.request('post', path, {});
    expect([self.status, self.body.error.code]).toEqual([403, 'self_approval']);
    const service = await admin.request('post', path, {});
    expect([service.status, service.body.error.code]).toEqual([403, 'people_only']);
    const approved = await alice.request('post', path, { comment: 'go' });
    expect(approved.status).toBe(200);
    const run = await waitForRun(release.id, runId);
    expect(run.status).toBe('success');
    expect(stage(run, 'prod').approval).toMatchObject({ outcome: 'approved', approvals: [{ by: { name: 'Alice' }, comment: 'go' }] });
    expect(marked(`${tag}-prod`)).toBe(true);
    const late = await alice.request('post', path, {});
    expect([late.status, late.body.error.code]).toEqual([409, 'not_awaiting_approval']);
  });

  test('a rejection fails the stage and skips what needs it', async () => {
    const prod = await deployment('eu', 'true');
    const release = await pipeline({ stages: [{ name: 'prod', deployment: prod.name, gate: { approvals: 1 } }, { name: 'after', deployment: prod.name, needs: ['prod'] }] });
    const runId = await trigger(release.id, {}, carol);
    await waitForRun(release.id, runId, (run) => run.status === 'awaiting_approval');
    const rejected = await alice.request('post', `/pipelines/${release.id}/runs/${runId}/stages/prod/reject`, { reason: 'not during the sale' });
    expect(rejected.status).toBe(200);
    const run = await waitForRun(release.id, runId);
    expect([run.status, stageStatuses(run)]).toEqual(['failed', { prod: 'failed', after: 'skipped' }]);
    expect(stage(run, 'prod')).toMatchObject({ error: 'rejected at its approval gate by Alice: not during the sale', approval: { outcome: 'rejected', reason: 'not during the sale' } });
  });
});

describe('guards on a pipeline', () => {
  test('a change freeze holds the stage it covers, visibly, until it lifts', async () => {
    const tag = unique();
    const prod = await deployment('us', mark(`${tag}-prod`));
    const release = await pipeline({ stages: [{ name: 'prod', deployment: prod.name }] });
    const freeze = (await admin.request('post', '/freezes', { name: `f-${tag}`, starts_at: new Date(Date.now() - 60_000).toISOString(), ends_at: new Date(Date.now() + 3600_000).toISOString() })).body.data;
    try {
      const runId = await trigger(release.id);
      const held = await waitForRun(release.id, runId, (run) => stage(run, 'prod').deployment_run_status === 'frozen');
      expect([held.status, stage(held, 'prod').status]).toEqual(['running', 'running']);
      expect(marked(`${tag}-prod`)).toBe(false);
      await admin.request('delete', `/freezes/${freeze.id}`);
      expect((await waitForRun(release.id, runId)).status).toBe('success');
      expect(marked(`${tag}-prod`)).toBe(true);
    } finally {
      await admin.request('delete', `/freezes/${freeze.id}`);
    }
  });

  test('a trigger by someone who may not run one stage is refused naming the stage, and nothing runs', async () => {
    const tag = unique();
    const build = await deployment('build', mark(`${tag}-build`));
    const prod = await deployment('eu', mark(`${tag}-prod`));
    const release = await pipeline({ stages: [{ name: 'build', deployment: build.name }, { name: 'prod', deployment: prod.name, needs: ['build'] }] });
    // Dana runs deployments on the servers tagged ci only; she reads the rest.
    const dana = await addPerson(bosun, admin, `Dana-${tag}`, 'operator', ['ci']);
    await admin.request('post', '/role-bindings', { role: 'viewer', subject: { type: 'person', id: dana.id } });
    const refused = await dana.request('post', `/pipelines/${release.id}/run`, {});
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/^Stage "prod"/);
    expect((await admin.request('get', `/pipelines/${release.id}/runs`)).body.meta.total).toBe(0);
    dana.close();
  });

  test('one Idempotency-Key, one run; a plan_hash binds the trigger to the plan reviewed', async () => {
    const prod = await deployment('eu', 'true');
    const release = await pipeline({ stages: [{ name: 'prod', deployment: prod.name }] });
    const key = `release-${unique()}`;
    const [one, two] = await Promise.all([0, 1].map(() => bosun.api.post(`/api/v1/pipelines/${release.id}/run`).set({ Authorization: `Bearer ${admin.token}`, 'Idempotency-Key': key }).send({})));
    expect([one!.status, two!.status]).toEqual([202, 202]);
    expect(one!.body.run_id).toBe(two!.body.run_id);
    await waitForRun(release.id, one!.body.run_id);
    const plan = (await admin.request('post', `/pipelines/${release.id}/plan`, {})).body.data;
    expect(plan.stages).toEqual([expect.objectContaining({ name: 'prod', deployment: { id: prod.id, name: prod.name }, targets: [expect.objectContaining({ server_id: servers.eu })] })]);
    await admin.request('patch', `/deployments/${prod.id}`, { steps: [{ name: 'do', command: 'echo changed' }] });
    const stale = await admin.request('post', `/pipelines/${release.id}/run`, { plan_hash: plan.plan_hash });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'plan_changed']);
    const fresh = (await admin.request('post', `/pipelines/${release.id}/plan`, {})).body.data;
    expect((await admin.request('post', `/pipelines/${release.id}/run`, { plan_hash: fresh.plan_hash })).status).toBe(202);
  });

  test('a parameter is passed as text, never run by a shell', async () => {
    const tag = unique();
    const echo = await deployment('build', `printf '%s' "$BOSUN_PARAM_VALUE" > ${work}/${tag}-value`, { parameters: [{ name: 'value', required: true }] });
    const release = await pipeline({ parameters: [{ name: 'value', required: true }], stages: [{ name: 'echo', deployment: echo.name, parameters: { value: 'v=${{ pipeline.parameters.value }}' } }] });
    const run = await waitForRun(release.id, await trigger(release.id, { parameters: { value: `$(touch ${work}/${tag}-pwned)` } }));
    expect(run.status).toBe('success');
    expect(readFileSync(`${work}/${tag}-value`, 'utf8')).toBe(`v=$(touch ${work}/${tag}-pwned)`);
    expect(marked(`${tag}-pwned`)).toBe(false);
  });
});
