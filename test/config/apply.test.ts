import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { userWithToken } from '../support/client';
import { eventually } from '../support/eventually';

/** Definitions kept in Git: plan, apply, idempotency, plan_hash, errors with their places, prune, export. */
describe('config as code: plan and apply', () => {
  let bosun: SharedBosun;
  beforeAll(async () => {
    bosun = await sharedBosun();
  });
  afterAll(() => bosun.stop());

  const web = (command = 'echo deploy', server = 'web-1') => `kind: Deployment
name: web-release
spec:
  server: ${server}
  steps:
    - name: deploy
      command: ${JSON.stringify(command)}
`;
  const freeze = `kind: Freeze
name: year-end
spec:
  starts_at: "2030-12-20T00:00:00.000Z"
  ends_at: "2031-01-02T00:00:00.000Z"
  tags: [prod]
`;
  const body = (files: Record<string, string>, more: object = {}) => ({ source: 'platform-repo', revision: 'abc1234', files: Object.entries(files).map(([path, content]) => ({ path, content })), ...more });

  async function organization(name: string) {
    const admin = await bosun.token(name);
    await userWithToken(bosun, admin).addServer({ title: 'web-1', host: '127.0.0.2' });
    return admin;
  }
  const plan = (token: string, b: object) => bosun.api.post('/api/v1/config/plan').set(bearer(token)).send(b);
  const apply = (token: string, b: object) => bosun.api.post('/api/v1/config/apply').set(bearer(token)).send(b);
  const deploymentNamed = async (token: string, name: string) => {
    const list = await bosun.api.get('/api/v1/deployments?per_page=100').set(bearer(token));
    const found = (list.body.data as Array<{ id: string; name: string }>).find((d) => d.name === name);
    return found ? (await bosun.api.get(`/api/v1/deployments/${found.id}`).set(bearer(token))).body.data : null;
  };

  test('a plan creates, an apply applies and marks what it owns; the same files again change nothing', async () => {
    const admin = await organization('cfg-apply');
    const files = { 'deploy/web.yaml': web(), 'freezes.yaml': freeze };
    const first = await plan(admin, body(files));
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      source: 'platform-repo', revision: 'abc1234', errors: [], update: [], delete: [], unchanged: [], drift: [],
      create: expect.arrayContaining([{ kind: 'Deployment', name: 'web-release', path: 'deploy/web.yaml' }, { kind: 'Freeze', name: 'year-end', path: 'freezes.yaml' }]),
    });
    expect(await deploymentNamed(admin, 'web-release')).toBeNull();

    const applied = await apply(admin, body(files, { plan_hash: first.body.data.plan_hash, web_url: 'https://git.example.com/acme/platform' }));
    expect(applied.status).toBe(200);
    expect(applied.body.data).toMatchObject({ created: 2, updated: 0, deleted: 0 });
    const deployment = await deploymentNamed(admin, 'web-release');
    expect(deployment).toMatchObject({ steps: [{ name: 'deploy', command: 'echo deploy' }], managed_by: { source: 'platform-repo', revision: 'abc1234', path: 'deploy/web.yaml', url: 'https://git.example.com/acme/platform/blob/abc1234/deploy/web.yaml', drifted: false } });

    const again = await plan(admin, body(files));
    expect(again.body.data).toMatchObject({ create: [], update: [], delete: [], errors: [] });
    expect(again.body.data.unchanged).toHaveLength(2);
    expect((await apply(admin, body(files))).body.data).toMatchObject({ created: 0, updated: 0, deleted: 0 });

    // The audit trail: the apply's entry (source, revision, counts) and one per object.
    await eventually(async () => (await bosun.api.get('/api/v1/audit?action=config.create').set(bearer(admin))).body.meta.total as number, (n) => n === 2);
    const entries = (await bosun.api.get('/api/v1/audit?action=config.apply').set(bearer(admin))).body.data as Array<{ details: Record<string, unknown> }>;
    expect(entries.map((e) => e.details)).toContainEqual(expect.objectContaining({ source: 'platform-repo', revision: 'abc1234', created: 2, updated: 0, deleted: 0 }));
  });

  test('an update shows each field from and to; an apply bound to a plan that moved is refused whole', async () => {
    const admin = await organization('cfg-update');
    expect((await apply(admin, body({ 'web.yaml': web() }))).status).toBe(200);
    const changed = await plan(admin, body({ 'web.yaml': web('echo v2') }));
    expect(changed.body.data.update).toEqual([{ kind: 'Deployment', name: 'web-release', path: 'web.yaml', reason: 'changed', fields: { 'steps[0].command': { from: 'echo deploy', to: 'echo v2' } } }]);

    // Another commit lands between review and apply: the reviewed plan is not the plan any more.
    expect((await apply(admin, body({ 'web.yaml': web('echo v3') }))).status).toBe(200);
    const stale = await apply(admin, body({ 'web.yaml': web('echo v2') }, { plan_hash: changed.body.data.plan_hash }));
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('plan_changed');
    expect((await deploymentNamed(admin, 'web-release')).steps[0].command).toBe('echo v3');
  });

  test('every problem at once, each at its file, line and column; nothing is applied while one stands', async () => {
    const admin = await organization('cfg-errors');
    const files = {
      'deploy/web.yaml': web('echo ok', 'web-9'),
      'deploy/bad.yaml': 'kind: Deployment\nname: broken\nspec:\n  server: web-1\n  steps:\n    - name: a\n      command: "true"\n      timeout_seconds: 100000\n',
      'freezes.yaml': freeze,
      'syntax.yaml': 'kind: Freeze\nname: [unclosed\n',
      'dup.yaml': freeze,
    };
    const planned = await plan(admin, body(files));
    const texts = (planned.body.data.errors as Array<{ text: string }>).map((e) => e.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^deploy\/web\.yaml:4:3: server: no server titled "web-9"/),
        'deploy/bad.yaml:8:7: steps[0].timeout_seconds must be at most 86400',
        expect.stringMatching(/^syntax\.yaml:\d+:\d+: /),
        expect.stringMatching(/^dup\.yaml:1:1: .*freezes\.yaml:1:1/),
      ]),
    );
    const refused = await apply(admin, body(files));
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.length).toBe(texts.length);
    expect((await bosun.api.get('/api/v1/freezes').set(bearer(admin))).body.data).toEqual([]);
  });

  test('a secret is named, never written: a missing one is a problem at its place', async () => {
    const admin = await organization('cfg-secret');
    const channel = 'kind: NotificationChannel\nname: ops\nspec:\n  type: webhook\n  url: ${secret:OPS_HOOK}\n  events: [run.failed]\n';
    const missing = await plan(admin, body({ 'channels.yaml': channel }));
    expect(missing.body.data.errors.map((e: { text: string }) => e.text)).toEqual([expect.stringMatching(/^channels\.yaml:5:3: url: no secret named "OPS_HOOK" in the organization/)]);
    expect((await bosun.api.put('/api/v1/secrets/OPS_HOOK').set(bearer(admin)).send({ value: 'http://127.0.0.1:9/hook' })).status).toBe(200);
    expect((await plan(admin, body({ 'channels.yaml': channel }))).body.data.errors).toEqual([]);
  });

  test('prune deletes only what this source applied and the files dropped, and only when asked', async () => {
    const admin = await organization('cfg-prune');
    const ops = userWithToken(bosun, admin);
    const byHand = await ops.defineDeployment(await ops.addServer({ title: 'web-2', host: '127.0.0.3' }), [{ name: 'a', command: 'true' }], 'by-hand');
    expect((await apply(admin, body({ 'web.yaml': web(), 'freezes.yaml': freeze }))).status).toBe(200);
    expect((await apply(admin, { ...body({ 'other.yaml': freeze.replace('year-end', 'other-freeze') }), source: 'other-repo' })).status).toBe(200);

    const kept = await plan(admin, body({ 'web.yaml': web() }));
    expect(kept.body.data.delete).toEqual([]);
    expect(kept.body.data.warnings.map((w: { text: string }) => w.text)).toEqual([expect.stringMatching(/^freezes\.yaml: Freeze "year-end" is no longer in the files/)]);

    const pruning = await plan(admin, body({ 'web.yaml': web() }, { prune: true }));
    expect(pruning.body.data.delete).toEqual([{ kind: 'Freeze', name: 'year-end' }]);
    expect((await apply(admin, body({ 'web.yaml': web() }, { prune: true, plan_hash: pruning.body.data.plan_hash }))).body.data).toMatchObject({ deleted: 1 });
    const freezes = (await bosun.api.get('/api/v1/freezes').set(bearer(admin))).body.data.map((f: { name: string }) => f.name);
    expect(freezes).toEqual(['other-freeze']);
    expect((await bosun.api.get(`/api/v1/deployments/${byHand.id}`).set(bearer(admin))).status).toBe(200);
  });

  test('a kind the caller may not change is refused naming the document', async () => {
    const admin = await organization('cfg-roles');
    const deployer = await bosun.token('cfg-roles', ['deployments:write', 'read'], 'deployer-token');
    const refused = await plan(deployer, body({ 'deploy/web.yaml': web(), 'freezes.yaml': freeze }));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/^freezes\.yaml:1:1: Freeze "year-end": changing a Freeze needs "admin"/);
    expect((await plan(deployer, body({ 'deploy/web.yaml': web() }))).status).toBe(200);
    expect((await plan(admin, body({ 'freezes.yaml': freeze }))).status).toBe(200);
  });

  test('an apply that would leave the organization without an administrator is refused whole, as the API refuses it', async () => {
    const admin = await organization('cfg-last-admin');
    const me = (await bosun.api.get('/api/v1/me').set(bearer(admin))).body.data.identity as { id: string; name: string };
    expect((await bosun.api.post('/api/v1/people').set(bearer(admin)).send({ name: 'Ada', email: 'ada@example.com' })).status).toBe(201);
    const access = (members: string[], ciRole: string) => ({
      'access/team.yaml': `kind: Team\nname: admins\nspec:\n  members: ${JSON.stringify(members)}\n`,
      'access/bindings.yaml': `kind: RoleBinding\nname: admins-admin\nspec:\n  role: admin\n  subject: team:admins\n---\nkind: RoleBinding\nname: ci-admin\nspec:\n  role: ${ciRole}\n  subject: service-account:${me.name}\n`,
    });
    expect((await apply(admin, body(access(['ada@example.com'], 'admin')))).status).toBe(200);
    // The binding the token came with goes: the files' bindings are now the only admins (Ada, and the token's account).
    const bindings = (await bosun.api.get('/api/v1/role-bindings?per_page=100').set(bearer(admin))).body.data as Array<{ id: string; name: string | null; subject: { id: string } }>;
    for (const b of bindings.filter((b) => b.name === null && b.subject.id === me.id)) expect((await bosun.api.delete(`/api/v1/role-bindings/${b.id}`).set(bearer(admin))).status).toBe(204);

    // Ada leaves the team: the account still administers.
    expect((await apply(admin, body(access([], 'admin')))).status).toBe(200);
    // Then the account's own binding made operator: nobody would be left. Refused, and nothing of it applied.
    const refused = await apply(admin, body(access([], 'operator')));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', message: expect.stringMatching(/^This apply would leave the organization without an administrator .*nothing was applied$/) });
    const after = (await bosun.api.get('/api/v1/role-bindings?per_page=100').set(bearer(admin))).body.data as Array<{ name: string | null; role: string }>;
    expect(after.find((b) => b.name === 'ci-admin')?.role).toBe('admin');
    // Both changes in one apply (Ada out of a team that has her again, the account operator): refused too.
    expect((await apply(admin, body(access(['ada@example.com'], 'admin')))).status).toBe(200);
    expect((await apply(admin, body(access([], 'operator')))).status).toBe(409);
    expect(((await bosun.api.get('/api/v1/teams?per_page=100').set(bearer(admin))).body.data as Array<{ name: string; members: unknown[] }>).find((t) => t.name === 'admins')?.members).toHaveLength(1);
  });

  test('an export never writes a secret: a channel made through the API exports its url as a secret to make', async () => {
    const admin = await organization('cfg-export-secret');
    const made = await bosun.api.post('/api/v1/notification-channels').set(bearer(admin)).send({ name: 'ops-hooks', type: 'webhook', url: 'http://127.0.0.1:9/very-secret-path', events: ['run.failed'] });
    expect(made.status).toBe(201);
    const files = (await bosun.api.get('/api/v1/config/export?kinds=NotificationChannel').set(bearer(admin))).body.data.files as Array<{ content: string }>;
    const text = files.map((f) => f.content).join('');
    expect(text).not.toContain('very-secret-path');
    expect(text).toContain('${secret:CHANNEL_OPS_HOOKS_URL}');
    // Applied as exported, it needs that secret first: the plan says so at the url.
    const planned = await plan(admin, body(Object.fromEntries(files.map((f, i) => [`export-${i}.yaml`, f.content]))));
    expect(planned.body.data.errors.map((e: { message: string }) => e.message)).toEqual([expect.stringMatching(/^url: no secret named "CHANNEL_OPS_HOOKS_URL"/)]);
  });

  test('export → apply to an empty organization → export is the same bytes', async () => {
    const admin = await organization('cfg-export-a');
    expect((await apply(admin, body({ 'web.yaml': web('printf "a: b #1\\n" && echo \'yes\''), 'freezes.yaml': freeze }))).status).toBe(200);
    const exported = (await bosun.api.get('/api/v1/config/export?kinds=Deployment,Freeze').set(bearer(admin))).body.data.files as Array<{ path: string; content: string }>;
    expect(exported.map((f) => f.path)).toEqual(expect.arrayContaining(['deployments.yaml', 'freezes.yaml']));

    const other = await organization('cfg-export-b');
    const applied = await apply(other, { source: 'exported', files: exported });
    expect(applied.status).toBe(200);
    const again = (await bosun.api.get('/api/v1/config/export?kinds=Deployment,Freeze').set(bearer(other))).body.data.files;
    expect(again).toEqual(exported);
  });
});
