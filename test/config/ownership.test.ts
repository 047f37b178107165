import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { markManaged, markPolicyManaged, type ManagedKind } from '../support/managed-by';

type Json = any;

/*
 * Ownership of definitions kept in Git (issue 38), on the real stack: an object a source applied
 * (marked here straight in MongoDB, as an apply marks it) refuses every change and delete through
 * the API with 409 managed_by_source naming the source and file; an organization admin may force
 * one (recorded in the audit trail, then shown as drifted), nobody else; what is not managed, and
 * what a managed deployment does (runs), go on as before.
 */

const SOURCE = { source: 'platform-repo', revision: '3f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49', path: 'deploy/web.yaml' };
const refusal = (what: string, deleting = false) =>
  `${what} is managed in Git (source platform-repo, deploy/web.yaml): change it there, or ${deleting ? 'pass ?force=true' : 'send "force": true'}`;

describe('definitions a Git source manages', () => {
  let bosun: SharedBosun;
  let admin: User;
  const ids = {} as Record<ManagedKind, string> & { other: string; server: string };
  /** Each managed kind: what it is called in a refusal, its path, and a change of it. */
  let kinds: Array<{ kind: ManagedKind; what: string; path: string; change: Json }>;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'ownership');
    ids.server = await admin.addServer({ host: '127.0.0.8', title: 'own-web', tags: ['web'] });
    ids.Deployment = (await admin.define({ name: 'web-release', server_id: ids.server, steps: [{ name: 'say', command: 'echo released' }] })).id;
    ids.other = (await admin.define({ name: 'by-hand', server_id: ids.server, steps: [{ name: 'say', command: 'echo by hand' }] })).id;
    const made = async (path: string, body: Json) => {
      const res = await admin.request('post', path, body);
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as string;
    };
    ids.Pipeline = await made('/pipelines', { name: 'release-train', stages: [{ name: 'web', deployment: 'web-release' }] });
    ids.Schedule = await made(`/deployments/${ids.Deployment}/schedules`, { name: 'nightly', every: '1h', time_zone: 'UTC', paused: true });
    const later = Date.now() + 30 * 86_400_000;
    ids.Freeze = await made('/freezes', { name: 'year-end', starts_at: new Date(later).toISOString(), ends_at: new Date(later + 3_600_000).toISOString(), tags: ['web'] });
    ids.Team = await made('/teams', { name: 'web-team', members: [] });
    ids.ServiceAccount = await made('/service-accounts', { name: 'ci' });
    ids.RoleBinding = await made('/role-bindings', { role: 'deployer', subject: { type: 'service_account', id: ids.ServiceAccount } });
    ids.NotificationChannel = await made('/notification-channels', { name: 'ops-hooks', type: 'webhook', url: 'http://127.0.0.1:9/hooks', events: ['run.failed'] });
    kinds = [
      { kind: 'Deployment', what: 'Deployment "web-release"', path: `/deployments/${ids.Deployment}`, change: { steps: [{ name: 'say', command: 'echo changed' }] } },
      { kind: 'Pipeline', what: 'Pipeline "release-train"', path: `/pipelines/${ids.Pipeline}`, change: { description: 'changed by hand' } },
      { kind: 'Schedule', what: 'Schedule "nightly"', path: `/deployments/${ids.Deployment}/schedules/${ids.Schedule}`, change: { every: '2h' } },
      { kind: 'Freeze', what: 'Freeze "year-end"', path: `/freezes/${ids.Freeze}`, change: { note: 'changed by hand' } },
      { kind: 'Team', what: 'Team "web-team"', path: `/teams/${ids.Team}`, change: { oidc_groups: ['web'] } },
      { kind: 'ServiceAccount', what: 'ServiceAccount "ci"', path: `/service-accounts/${ids.ServiceAccount}`, change: { description: 'changed by hand' } },
      { kind: 'RoleBinding', what: `RoleBinding "${ids.RoleBinding}"`, path: `/role-bindings/${ids.RoleBinding}`, change: { role: 'operator' } },
      { kind: 'NotificationChannel', what: 'NotificationChannel "ops-hooks"', path: `/notification-channels/${ids.NotificationChannel}`, change: { events: ['run.succeeded'] } },
    ];
    for (const { kind } of kinds) await markManaged(bosun.mongoUri, kind, ids[kind], SOURCE);
    await markPolicyManaged(bosun.mongoUri, bosun.org('ownership'), SOURCE);
  }, 120_000);
  afterAll(() => bosun.stop());

  test('each kind’s view names its source, revision and file; nothing is drifted yet', async () => {
    for (const { path } of kinds) {
      const res = await admin.request('get', path);
      expect(res.status).toBe(200);
      expect(res.body.data.managed_by).toEqual({ source: 'platform-repo', revision: SOURCE.revision, path: 'deploy/web.yaml', url: null, drifted: false });
    }
    expect((await admin.request('get', '/policy')).body.data.managed_by).toMatchObject({ source: 'platform-repo', drifted: false });
    expect((await admin.request('get', `/deployments/${ids.other}`)).body.data.managed_by).toBeNull();
    const listed = (await admin.request('get', '/deployments')).body.data as Json[];
    expect(listed.find((d) => d.id === ids.Deployment).managed_by).toMatchObject({ source: 'platform-repo' });
  });

  test('every change and delete of a managed object, even by an organization admin, is 409 managed_by_source naming the source and file; nothing changes', async () => {
    for (const { what, path, change } of kinds) {
      const before = (await admin.request('get', path)).body.data;
      const patched = await admin.request('patch', path, change);
      expect([path, patched.status, patched.body]).toEqual([path, 409, { error: { code: 'managed_by_source', message: refusal(what) } }]);
      const deleted = await admin.request('delete', path);
      expect([path, deleted.status, deleted.body]).toEqual([path, 409, { error: { code: 'managed_by_source', message: refusal(what, true) } }]);
      expect((await admin.request('get', path)).body.data).toEqual(before);
    }
    const policy = await admin.request('put', '/policy', { allow_destructive: true, require_approval_for: [] });
    expect(policy.status).toBe(409);
    expect(policy.body.error).toEqual({ code: 'managed_by_source', message: refusal('The command policy') });
  });

  test('force from a deployer, or from an admin of some servers only, is 403 naming why; the deployer is refused 409 without it', async () => {
    const deployer = await addPerson(bosun, admin, 'Dana', 'deployer');
    const webAdmin = await addPerson(bosun, admin, 'Wes', 'admin', ['web']);
    const path = `/deployments/${ids.Deployment}`;
    expect((await deployer.request('patch', path, { steps: [{ name: 'say', command: 'echo dana' }] })).body.error.code).toBe('managed_by_source');
    for (const [who, name] of [[deployer, 'Dana'], [webAdmin, 'Wes']] as const) {
      const forced = await who.request('patch', path, { steps: [{ name: 'say', command: 'echo forced' }], force: true });
      expect(forced.status).toBe(403);
      expect(forced.body.error).toEqual({
        code: 'forbidden',
        message: `Forcing a change to Deployment "web-release", which is managed in Git, needs role admin for the whole organization; ${name} has not`,
      });
      expect((await who.request('delete', `${path}?force=true`)).status).toBe(403);
    }
    const freeze = await webAdmin.request('patch', `/freezes/${ids.Freeze}`, { note: 'wes', force: true });
    expect(freeze.status).toBe(403);
    expect((await admin.request('get', path)).body.data).toMatchObject({ steps: [{ command: 'echo released' }], managed_by: { drifted: false } });
  });

  test('an organization admin’s forced change goes ahead, shows the object as drifted, and the audit entry says force', async () => {
    for (const { path, change } of kinds) {
      const forced = await admin.request('patch', path, { ...change, force: true });
      expect([path, forced.status]).toEqual([path, 200]);
      expect(forced.body.data.managed_by).toEqual({ source: 'platform-repo', revision: SOURCE.revision, path: 'deploy/web.yaml', url: null, drifted: true });
    }
    expect((await admin.request('get', `/deployments/${ids.Deployment}`)).body.data.steps[0].command).toBe('echo changed');
    const policy = await admin.request('put', '/policy', { allow_destructive: true, require_approval_for: [], force: true });
    expect(policy.status).toBe(200);
    expect(policy.body.data).toMatchObject({ allow_destructive: true, managed_by: { drifted: true } });
    const entry: Json = await eventually(
      async () => ((await admin.request('get', '/audit?action=deployment.update&per_page=100')).body.data as Json[]).find((e) => e.target.id === ids.Deployment && e.outcome === 'ok'),
      Boolean,
    );
    expect(entry.details).toMatchObject({ force: true, status: 200 });
  });

  test('what is not managed changes as before, and a managed deployment still runs', async () => {
    const plain = await admin.request('patch', `/deployments/${ids.other}`, { steps: [{ name: 'say', command: 'echo still by hand' }] });
    expect(plain.status).toBe(200);
    expect(plain.body.data.managed_by).toBeNull();
    const run = await admin.runToEnd(ids.Deployment);
    expect(run).toMatchObject({ status: 'success', steps: [{ output: 'changed\n' }] });
    // Pausing a schedule and a service account's tokens are operations, not definitions.
    expect((await admin.request('post', `/deployments/${ids.Deployment}/schedules/${ids.Schedule}/unpause`, {})).status).toBe(200);
    expect((await admin.request('post', `/deployments/${ids.Deployment}/schedules/${ids.Schedule}/pause`, {})).status).toBe(200);
    expect((await admin.request('post', `/service-accounts/${ids.ServiceAccount}/tokens`, { name: 'ci-token' })).status).toBe(201);
  });

  test('a delete that would take managed definitions with it is refused naming them: a hand-made deployment’s managed schedule, a hand-made team’s managed binding', async () => {
    const made = await admin.request('post', `/deployments/${ids.other}/schedules`, { name: 'by-hand-nightly', every: '1h', time_zone: 'UTC', paused: true });
    expect(made.status).toBe(201);
    await markManaged(bosun.mongoUri, 'Schedule', made.body.data.id as string, SOURCE);
    const refused = await admin.request('delete', `/deployments/${ids.other}`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'managed_by_source']);
    expect(refused.body.error.message).toMatch(/^Schedule "by-hand-nightly" is managed in Git \(source platform-repo, /);
    expect((await admin.request('get', `/deployments/${ids.other}/schedules/${made.body.data.id}`)).status).toBe(200);
    expect((await admin.request('delete', `/deployments/${ids.other}?force=true`)).status).toBe(204);
    expect((await admin.request('get', `/deployments/${ids.other}`)).status).toBe(404);

    // A team made by hand whose role binding a source manages: its delete would take the binding along.
    const team = (await admin.request('post', '/teams', { name: 'hand-team', members: [] })).body.data.id as string;
    const binding = await admin.request('post', '/role-bindings', { name: 'hand-team-viewers', role: 'viewer', subject: { type: 'team', id: team } });
    expect(binding.status).toBe(201);
    await markManaged(bosun.mongoUri, 'RoleBinding', binding.body.data.id as string, SOURCE);
    const teamRefused = await admin.request('delete', `/teams/${team}`);
    expect([teamRefused.status, teamRefused.body.error.message]).toEqual([409, expect.stringMatching(/^RoleBinding "hand-team-viewers" is managed in Git/)]);
    expect((await admin.request('get', `/role-bindings/${binding.body.data.id}`)).status).toBe(200);
    expect((await admin.request('delete', `/teams/${team}?force=true`)).status).toBe(204);
    expect((await admin.request('get', `/role-bindings/${binding.body.data.id}`)).status).toBe(404);
  });

  test('an organization admin deletes a managed object with ?force=true; force must be true or false', async () => {
    expect((await admin.request('delete', `/freezes/${ids.Freeze}?force=yes`)).status).toBe(422);
    // The pipeline goes before the deployment it runs; the schedule before its deployment.
    for (const kind of ['Schedule', 'Pipeline', 'Freeze', 'RoleBinding', 'Team', 'ServiceAccount', 'NotificationChannel', 'Deployment'] as const) {
      const { path } = kinds.find((k) => k.kind === kind)!;
      const deleted = await admin.request('delete', `${path}?force=true`);
      expect([kind, deleted.status]).toEqual([kind, 204]);
      expect((await admin.request('get', path)).status).toBe(404);
    }
  });
});
