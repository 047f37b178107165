import { Types } from 'mongoose';
import { loadNames } from '../../src/api/config/names';
import { RoleBindingModel, TeamModel } from '../../src/domain/access/model';
import { OrganizationModel } from '../../src/domain/organizations/model';
import type { KindAdapter } from '../../src/domain/config/types';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { userWithToken, type User } from '../support/client';
import { adminOf, applyInTransaction, checkContext, connectTo, kindsB } from '../support/config-kinds';
import type { Principal } from '../../src/domain/tokens/service';

/*
 * The adapters of Freeze, Policy, Team, ServiceAccount, RoleBinding and NotificationChannel (issue 38):
 * objects made through the API read back as canonical specs that check() returns unchanged; a spec
 * written in an apply's transaction reads back through the API as an API-made one; every problem of a
 * spec is reported at its path; documents may name what the same files create; prunes say why not.
 */

type Json = any;

describe('config kinds: freezes, policy, teams, service accounts, role bindings, channels', () => {
  let bosun: SharedBosun;
  let admin: User;
  let organizationId: string;
  let principal: Principal;
  let disconnect: () => Promise<void>;
  let deploymentId: string;
  let kinds: ReturnType<typeof kindsB>;
  const ids: Record<string, string> = {};

  const created = async (path: string, body: Json) => {
    const res = await admin.request('post', path, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const read = async (path: string) => (await admin.request('get', path)).body.data;
  const currentOf = async (adapter: KindAdapter, name: string) => (await adapter.current(organizationId, await loadNames(organizationId))).find((o) => o.name === name)!;
  /** A view without what differs between two objects made alike: ids, names, times, token. */
  const comparable = (view: Json) => {
    // managed_by differs by design (the API made one, the apply the other): compared apart.
    const { id: _id, name: _name, created_at: _c, updated_at: _u, created_by, updated_by, managed_by: _managed, ...rest } = view;
    const actor = (a: Json) => (a ? { type: a.type, id: a.id, name: a.name } : a);
    return { ...rest, ...(created_by ? { created_by: actor(created_by), updated_by: actor(updated_by) } : {}) };
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = userWithToken(bosun, await bosun.token('kinds'));
    disconnect = await connectTo(bosun.mongoUri);
    ({ organizationId, principal } = await adminOf(admin, bosun.org('kinds')));
    kinds = kindsB(bosun);
    ids.ada = (await created('/people', { name: 'Ada', email: 'ada@example.com' })).id;
    ids.bob = (await created('/people', { name: 'Bob' })).id;
    ids.ci = (await created('/service-accounts', { name: 'ci', description: 'the CI pipeline', agent: true })).id;
    ids.web = (await created('/teams', { name: 'web', members: [ids.ada, ids.bob, ids.ada], oidc_groups: ['web-devs'] })).id;
    deploymentId = (await created('/deployments', { name: 'web-release', targets: { tags: ['web'] }, steps: [{ name: 'deploy', command: 'true' }] })).id;
  });
  afterAll(async () => {
    await disconnect();
    await bosun.stop();
  });

  test('objects of every kind made through the API read back as canonical specs, references by name, that check() returns unchanged', async () => {
    await created('/role-bindings', { name: 'web-deployers', role: 'deployer', subject: { type: 'team', id: ids.web }, servers: { tags: ['web', 'web'] }, deployments: [deploymentId], max_targets_per_run: 5 });
    await created('/role-bindings', { name: 'ada-approves', role: 'approver', subject: { type: 'person', id: ids.ada } });
    await created('/role-bindings', { name: 'ci-deploys', role: 'deployer', subject: { type: 'service_account', id: ids.ci }, deployments: [deploymentId] });
    await created('/role-bindings', { role: 'viewer', subject: { type: 'person', id: ids.bob } });
    await created('/freezes', { name: 'new-year', starts_at: '2026-12-31T18:00:00+01:00', ends_at: '2027-01-02T00:00:00Z', tags: ['web'], note: 'holidays' });
    await created('/freezes', { name: 'office-hours', cron: '0 8 * * MON-FRI', duration: '10h', time_zone: 'Europe/Berlin' });
    expect((await admin.request('put', '/policy', { allow_destructive: false, require_approval_for: ['destructive', 'change', 'change'] })).status).toBe(200);

    const names = await loadNames(organizationId);
    const specs = async (adapter: KindAdapter) => Object.fromEntries((await adapter.current(organizationId, names)).map((o) => [o.name, o.spec]));
    expect(await specs(kinds.team)).toEqual({ web: { members: ['ada@example.com', 'Bob'], oidc_groups: ['web-devs'] } });
    expect((await specs(kinds.serviceAccount)).ci).toEqual({ description: 'the CI pipeline', agent: true });
    expect(await specs(kinds.roleBinding)).toEqual({
      'web-deployers': { role: 'deployer', subject: 'team:web', servers: { tags: ['web'] }, deployments: ['web-release'], max_targets_per_run: 5 },
      'ada-approves': { role: 'approver', subject: 'person:ada@example.com', servers: null, deployments: null, max_targets_per_run: null },
      'ci-deploys': { role: 'deployer', subject: 'service-account:ci', servers: null, deployments: ['web-release'], max_targets_per_run: null },
    });
    expect(await specs(kinds.freeze)).toEqual({
      'new-year': { starts_at: '2026-12-31T17:00:00.000Z', ends_at: '2027-01-02T00:00:00.000Z', time_zone: 'UTC', tags: ['web'], note: 'holidays' },
      'office-hours': { cron: '0 8 * * MON-FRI', duration: '10h', time_zone: 'Europe/Berlin', tags: null, note: null },
    });
    expect(await specs(kinds.policy)).toEqual({ default: { allow_destructive: false, require_approval_for: ['destructive', 'change'], agents_require_approval_for_change: true } });

    for (const adapter of [kinds.team, kinds.serviceAccount, kinds.roleBinding, kinds.freeze, kinds.policy]) {
      for (const object of await adapter.current(organizationId, names)) {
        const result = await adapter.check(object.spec, await checkContext(organizationId, object));
        expect({ kind: adapter.kind, name: object.name, ...result }).toEqual({ kind: adapter.kind, name: object.name, spec: object.spec, problems: [] });
        expect(JSON.stringify(result.spec)).toBe(JSON.stringify(object.spec));
        expect(object.managed_by).toBeNull();
      }
    }
  });

  test('a spec written in a transaction reads back through the API as the same one made through the API, managed_by stored; replaced, then removed', async () => {
    const apiFreeze = await created('/freezes', { name: 'api-freeze', cron: '0 22 * * *', duration: '2h', time_zone: 'UTC', tags: ['db'], note: 'backups' });
    const apiTeam = await created('/teams', { name: 'api-team', members: [ids.ada], oidc_groups: [] });
    const apiAccount = await created('/service-accounts', { name: 'api-bot', description: null, agent: false });
    const apiBinding = await created('/role-bindings', { name: 'api-binding', role: 'operator', subject: { type: 'team', id: ids.web }, servers: { tags: ['db'] }, deployments: [deploymentId], max_targets_per_run: 3 });

    const [freezeId, teamId, accountId, bindingId] = await applyInTransaction(organizationId, principal, [
      { adapter: kinds.freeze, name: 'git-kinds.freeze', spec: (await currentOf(kinds.freeze, 'api-freeze')).spec, path: 'bosun/freezes.yaml' },
      { adapter: kinds.team, name: 'git-kinds.team', spec: { members: ['ada@example.com'], oidc_groups: [] } },
      { adapter: kinds.serviceAccount, name: 'git-bot', spec: { description: null, agent: false } },
      { adapter: kinds.roleBinding, name: 'git-binding', spec: { role: 'operator', subject: 'team:web', servers: { tags: ['db'] }, deployments: ['web-release'], max_targets_per_run: 3 } },
    ]);
    expect(comparable(await read(`/freezes/${freezeId}`))).toEqual(comparable(apiFreeze));
    expect((await read(`/freezes/${freezeId}`)).created_by).toMatchObject({ type: principal.identity.type, id: principal.identity.id, name: principal.identity.name });
    expect(comparable(await read(`/teams/${teamId}`))).toEqual(comparable(apiTeam));
    expect(comparable(await read(`/service-accounts/${accountId}`))).toEqual(comparable(apiAccount));
    expect(comparable(await read(`/role-bindings/${bindingId}`))).toEqual(comparable(apiBinding));
    expect((await read(`/role-bindings/${bindingId}`)).name).toBe('git-binding');
    const stored = await TeamModel.findById(teamId).lean().orFail();
    expect(stored.managed_by).toMatchObject({ source: 'platform-repo', revision: '3f2a1c0e', path: 'bosun/all.yaml', forced_at: null });

    // Replaced: the new fields, the same id and creation.
    const before = await read(`/freezes/${freezeId}`);
    await applyInTransaction(organizationId, principal, [
      { adapter: kinds.freeze, name: 'git-kinds.freeze', spec: { starts_at: '2027-03-01T00:00:00.000Z', ends_at: '2027-03-02T00:00:00.000Z', time_zone: 'UTC', tags: null, note: null } },
      { adapter: kinds.team, name: 'git-kinds.team', spec: { members: ['Bob', 'ada@example.com'], oidc_groups: ['sso-team'] } },
      { adapter: kinds.policy, name: 'default', spec: { allow_destructive: true, require_approval_for: ['destructive'], agents_require_approval_for_change: false } },
    ]);
    expect(await read(`/freezes/${freezeId}`)).toMatchObject({ kind: 'once', starts_at: '2027-03-01T00:00:00.000Z', cron: null, tags: null, created_at: before.created_at, created_by: before.created_by });
    expect(await read(`/teams/${teamId}`)).toMatchObject({ members: [ids.bob, ids.ada], oidc_groups: ['sso-team'] });
    expect(await read('/policy')).toEqual({ allow_destructive: true, require_approval_for: ['destructive'], agents_require_approval_for_change: false, managed_by: expect.objectContaining({ source: 'platform-repo', drifted: false }) });
    expect((await OrganizationModel.findById(organizationId).lean().orFail()).policy_managed_by).toMatchObject({ source: 'platform-repo' });

    // Removed as the API deletes: the team's bindings with it; the policy back to the default.
    const teamBinding = await applyInTransaction(organizationId, principal, [{ adapter: kinds.roleBinding, name: 'git-kinds.team-binding', spec: { role: 'viewer', subject: 'team:git-kinds.team', servers: null, deployments: null, max_targets_per_run: null } }]);
    await applyInTransaction(organizationId, principal, [], [
      { adapter: kinds.freeze, id: freezeId! },
      { adapter: kinds.team, id: teamId! },
      { adapter: kinds.serviceAccount, id: accountId! },
      { adapter: kinds.policy, id: organizationId },
    ]);
    for (const path of [`/freezes/${freezeId}`, `/teams/${teamId}`, `/service-accounts/${accountId}`, `/role-bindings/${teamBinding[0]}`]) expect((await admin.request('get', path)).status).toBe(404);
    expect(await read('/policy')).toEqual({ allow_destructive: false, require_approval_for: ['destructive'], agents_require_approval_for_change: true, managed_by: null });
  });

  test('check() reports every problem of a spec at its path, in the API’s words', async () => {
    const context = await checkContext(organizationId);
    const problems = async (adapter: KindAdapter, spec: Json, ctx = context) => (await adapter.check(spec, ctx)).problems;

    expect(await problems(kinds.team, { members: ['nobody@example.com', 'ada@example.com', 'Ada'], extra: 1 })).toEqual([{ path: [], message: 'unknown field: extra' }]);
    expect(await problems(kinds.team, { members: ['nobody@example.com', 'ada@example.com', 'Ada'] })).toEqual([
      { path: ['members', 0], message: 'no person with the email or name "nobody@example.com" in the organization' },
      { path: ['members', 2], message: 'no person with the email or name "Ada" in the organization' },
    ]);
    expect(await problems(kinds.roleBinding, { role: 'king', subject: 'robot:r2', servers: { tags: [] } })).toEqual([
      { path: ['role'], message: expect.stringContaining('a role is one of') },
      { path: ['subject'], message: 'a subject is "team:NAME", "service-account:NAME" or "person:EMAIL"' },
      { path: ['servers', 'tags'], message: 'at least one tag (null: every server)' },
    ]);
    expect(await problems(kinds.roleBinding, { role: 'deployer', subject: 'service-account:nope', deployments: ['web-release', 'api-release'] })).toEqual([
      { path: ['subject'], message: 'no service account named "nope" (in the files or the organization)' },
      { path: ['deployments', 1], message: 'no deployment named "api-release" (in the files or the organization)' },
    ]);
    expect(await problems(kinds.freeze, { starts_at: 'yesterday', ends_at: '2027-01-01T00:00:00Z', tags: [] })).toEqual([
      { path: ['starts_at'], message: 'starts_at is an ISO 8601 timestamp such as "2025-11-28T00:00:00Z"' },
      { path: ['tags'], message: 'give at least one tag, or null for every server' },
    ]);
    expect(await problems(kinds.freeze, { starts_at: '2027-01-02T00:00:00Z', ends_at: '2027-01-01T00:00:00Z' })).toEqual([
      { path: ['ends_at'], message: 'ends_at (2027-01-01T00:00:00.000Z) must be after starts_at (2027-01-02T00:00:00.000Z)' },
    ]);
    expect(await problems(kinds.freeze, { cron: '0 8 * * *', duration: '40d', time_zone: 'UTC' })).toEqual([{ path: ['duration'], message: 'a freeze\'s window lasts at most 31d; "40d" is longer' }]);
    expect(await problems(kinds.freeze, { cron: '0 8 * * *', duration: '1h', time_zone: 'Mars/Olympus' })).toEqual([{ path: ['time_zone'], message: '"Mars/Olympus" is not an IANA time zone (such as "Europe/Berlin" or "UTC")' }]);
    expect(await problems(kinds.serviceAccount, { agent: 'yes', token: 'bsn_x' })).toEqual([
      { path: ['agent'], message: 'Invalid input: expected boolean, received string' },
      { path: [], message: 'unknown field: token' },
    ]);
    expect(kinds.serviceAccount.fileSchema.safeParse({}).success).toBe(true);
    expect(kinds.serviceAccount.nameSchema.safeParse('ci bot!').success).toBe(false);
    expect(await problems(kinds.policy, { allow_destructive: 'yes', require_approval_for: ['everything'] }, await checkContext(organizationId, await currentOf(kinds.policy, 'default')))).toEqual([
      { path: ['allow_destructive'], message: expect.any(String) },
      { path: ['require_approval_for', 0], message: expect.any(String) },
    ]);
    // current() always has `default`: a Policy of another name has no object, and is refused.
    expect(await problems(kinds.policy, { allow_destructive: true, require_approval_for: [] })).toEqual([{ path: [], message: 'the organization has one policy: name it "default"' }]);
    expect(await problems(kinds.channel, { type: 'webhook', url: 'https://hooks.example.com/T0/B0/secret', events: ['run.failed'], filter: { deployments: ['web-release', 'gone'] } })).toEqual([
      { path: ['url'], message: "a channel's url is secret: use ${secret:NAME}" },
      { path: ['filter', 'deployments', 1], message: 'no deployment named "gone" (in the files or the organization)' },
    ]);
    expect(await problems(kinds.channel, { type: 'webhook', url: '${secret:NO_SUCH_HOOK}', events: ['run.failed'] })).toEqual([{ path: ['url'], message: 'no secret named "NO_SUCH_HOOK" in the organization (PUT /api/v1/secrets/NO_SUCH_HOOK)' }]);
    expect(await problems(kinds.channel, { type: 'pager', url: '${secret:X}', events: ['run.exploded'] })).toEqual([
      { path: ['type'], message: expect.any(String) },
      { path: ['events', 0], message: expect.any(String) },
    ]);
  });

  test('a document may name what the same files create: the planned names resolve, and one transaction writes them all', async () => {
    const planned = [
      { kind: 'Team' as const, name: 'sre', id: new Types.ObjectId().toString() },
      { kind: 'ServiceAccount' as const, name: 'deploy-bot', id: new Types.ObjectId().toString() },
    ];
    const binding = { role: 'deployer', subject: 'team:sre', servers: null, deployments: ['web-release'], max_targets_per_run: null };
    expect((await kinds.roleBinding.check(binding, await checkContext(organizationId))).problems).toEqual([{ path: ['subject'], message: 'no team named "sre" (in the files or the organization)' }]);
    expect(await kinds.roleBinding.check(binding, await checkContext(organizationId, null, planned))).toEqual({ spec: binding, problems: [] });

    const [teamId, , bindingId] = await applyInTransaction(
      organizationId,
      principal,
      [
        { adapter: kinds.team, name: 'sre', spec: { members: ['Bob'], oidc_groups: [] }, id: planned[0]!.id },
        { adapter: kinds.serviceAccount, name: 'deploy-bot', spec: { description: 'deploys', agent: false }, id: planned[1]!.id },
        { adapter: kinds.roleBinding, name: 'sre-deploys', spec: binding },
      ],
      [],
      planned,
    );
    expect(teamId).toBe(planned[0]!.id);
    expect(await read(`/role-bindings/${bindingId}`)).toMatchObject({ name: 'sre-deploys', subject: { type: 'team', id: planned[0]!.id }, deployments: [deploymentId] });
    expect((await RoleBindingModel.findById(bindingId).lean().orFail()).managed_by).toMatchObject({ source: 'platform-repo' });
  });

  test('role bindings have an optional name through the API: unique in the organization, changed by PATCH, shown in the view', async () => {
    const binding = await created('/role-bindings', { name: 'ops-viewers', role: 'viewer', subject: { type: 'person', id: ids.bob } });
    expect(binding.name).toBe('ops-viewers');
    const again = await admin.request('post', '/role-bindings', { name: 'ops-viewers', role: 'viewer', subject: { type: 'person', id: ids.ada } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('The organization already has a role binding named "ops-viewers"');
    const bad = await admin.request('post', '/role-bindings', { name: 'ops viewers!', role: 'viewer', subject: { type: 'person', id: ids.ada } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details).toEqual([{ path: 'name', message: expect.any(String) }]);
    expect((await admin.request('patch', `/role-bindings/${binding.id}`, { name: 'viewers' })).body.data.name).toBe('viewers');
    expect((await admin.request('patch', `/role-bindings/${binding.id}`, { name: null })).body.data.name).toBeNull();
    expect((await created('/role-bindings', { role: 'viewer', subject: { type: 'person', id: ids.ada } })).name).toBeNull();
  });

  test('prune blockers are the API’s reasons to refuse a delete: the last administrator', async () => {
    const tokenAccount = principal.identity.id;
    expect(await kinds.serviceAccount.pruneBlocker(organizationId, tokenAccount, await loadNames(organizationId))).toBe('This would leave the organization without an administrator: give the admin role to someone else first');
    expect(await kinds.serviceAccount.pruneBlocker(organizationId, ids.ci!, await loadNames(organizationId))).toBeNull();
    const [adminTeam] = await applyInTransaction(organizationId, principal, [{ adapter: kinds.team, name: 'admins', spec: { members: ['ada@example.com'], oidc_groups: [] } }]);
    const [adminBinding] = await applyInTransaction(organizationId, principal, [{ adapter: kinds.roleBinding, name: 'admins-admin', spec: { role: 'admin', subject: 'team:admins', servers: null, deployments: null, max_targets_per_run: null } }]);
    // The token's own binding keeps an administrator: the team and its binding may go.
    expect(await kinds.team.pruneBlocker(organizationId, adminTeam!, await loadNames(organizationId))).toBeNull();
    expect(await kinds.roleBinding.pruneBlocker(organizationId, adminBinding!, await loadNames(organizationId))).toBeNull();
    await RoleBindingModel.deleteMany({ organization_id: organizationId, 'subject.id': new Types.ObjectId(tokenAccount) });
    expect(await kinds.team.pruneBlocker(organizationId, adminTeam!, await loadNames(organizationId))).toMatch(/without an administrator/);
    expect(await kinds.roleBinding.pruneBlocker(organizationId, adminBinding!, await loadNames(organizationId))).toMatch(/without an administrator/);
    expect(await kinds.freeze.pruneBlocker(organizationId, new Types.ObjectId().toString(), await loadNames(organizationId))).toBeNull();
  });
});
