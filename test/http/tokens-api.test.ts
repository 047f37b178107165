import { bearer, startBosun, type Bosun } from '../support/bosun';
import { personToken, userWithToken } from '../support/client';
import { SCOPES } from '../../src/domain/access/scopes';
import { ApiTokenModel } from '../../src/domain/tokens/model';

describe('API tokens over HTTP (administrators of their own organization)', () => {
  let bosun: Bosun;
  let admin: string;
  beforeAll(async () => {
    bosun = await startBosun();
    admin = await bosun.token('tokens-http', ['admin'], 'admin');
  });
  afterAll(() => bosun.stop());

  const as = (token: string) => ({
    list: () => bosun.api.get('/api/v1/tokens').set(bearer(token)),
    create: (body: object) => bosun.api.post('/api/v1/tokens').set(bearer(token)).send(body),
    revoke: (id: string) => bosun.api.delete(`/api/v1/tokens/${id}`).set(bearer(token)),
  });

  test('a created token is shown once, works with its scopes, and is listed (never its value) with its last use', async () => {
    // An organization of its own: its list holds its admin and this token alone, whatever the other tests created.
    const own = await bosun.token('tokens-listed', ['admin'], 'admin');
    const created = await as(own).create({ name: 'ci', scopes: ['deployments:run', 'read', 'read'], expires_in: '90d' });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const token = created.body.data.token as string;
    expect(token).toMatch(/^bsn_/);
    expect(created.body.data).toMatchObject({ name: 'ci', scopes: ['deployments:run', 'read'], revoked_at: null, last_used_at: null, current: false, prefix: token.slice(0, 10) });
    expect(Date.parse(created.body.data.expires_at) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    // Only its hash is stored.
    const stored = await ApiTokenModel.findById(created.body.data.id).lean();
    expect(JSON.stringify(stored)).not.toContain(token.slice(10));

    // It works, within its scopes.
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    expect((await bosun.api.post('/api/v1/servers').set(bearer(token)).send({})).status).toBe(403);
    expect((await as(token).list()).status).toBe(403);

    const listed = await as(own).list();
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(listed.body.data.map((t: { name: string; current: boolean }) => [t.name, t.current])).toEqual([
      ['admin', true],
      ['ci', false],
    ]);
    expect(listed.body.data[1].last_used_at).not.toBeNull();
  });

  test('anyone lists their own tokens at /me/tokens (the organization’s list stays the administrators’)', async () => {
    const call = (token: string) => ({
      post: (path: string, body: object) => bosun.api.post(`/api/v1${path}`).set(bearer(token)).send(body),
      get: (path: string) => bosun.api.get(`/api/v1${path}`).set(bearer(token)),
    });
    const account = (await call(admin).post('/service-accounts', { name: 'nightly-viewer' })).body.data.id as string;
    await call(admin).post('/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account } });
    const first = (await call(admin).post(`/service-accounts/${account}/tokens`, { name: 'nightly-a' })).body.data.token as string;
    await call(admin).post(`/service-accounts/${account}/tokens`, { name: 'nightly-b', scopes: ['read'] });

    const mine = await call(first).get('/me/tokens');
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((t: { name: string; current: boolean }) => [t.name, t.current])).toEqual([['nightly-a', true], ['nightly-b', false]]);
    expect(JSON.stringify(mine.body)).not.toContain(first.slice(10));
    expect((await call(first).get('/tokens')).status).toBe(403);
  });

  test('each token says what it can do: its identity’s roles narrowed by its scopes, not its scope names', async () => {
    const own = await bosun.token('tokens-rights', ['admin'], 'admin');
    // A person who is only an approver on servers tagged web, with a token of the default scope, admin.
    const ann = await personToken(userWithToken(bosun, own), 'Ann', 'approver', ['web']);
    const reader = (await as(own).create({ name: 'reader', scopes: ['read'] })).body.data;
    const byName = async (name: string) => (await as(own).list()).body.data.find((t: { name: string }) => t.name === name);

    const approver = { role: 'approver', actions: ['read', 'approve'], servers: { tags: ['web'] }, deployments: null, max_targets_per_run: null };
    expect(await byName('ann-token')).toMatchObject({ scopes: ['admin'], can: { actions: ['read', 'approve'], bindings: [approver] } });
    expect((await byName('admin')).can).toEqual({ actions: [...SCOPES], bindings: [{ role: 'admin', actions: [...SCOPES], servers: null, deployments: null, max_targets_per_run: null }] });
    // An administrator's token narrowed to read reads, and no more.
    expect(reader.can).toEqual({ actions: ['read'], bindings: [{ role: 'admin', actions: ['read'], servers: null, deployments: null, max_targets_per_run: null }] });
    // Ann's own list says the same of her token.
    const mine = await bosun.api.get('/api/v1/me/tokens').set(bearer(ann.token));
    expect(mine.body.data.map((t: { name: string; can: unknown }) => [t.name, t.can])).toEqual([['ann-token', { actions: ['read', 'approve'], bindings: [approver] }]]);
    // A revoked token can do nothing.
    expect((await as(own).revoke(reader.id)).body.data.can).toEqual({ actions: [], bindings: [] });
  });

  test('bad input is refused with the usual envelope and creates nothing', async () => {
    const before = (await as(admin).list()).body.data.length;
    for (const [body, path] of [
      [{ name: 'has space', scopes: ['read'] }, 'name'],
      [{ name: 'x', scopes: ['root'] }, 'scopes.0'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['read'], expires_in: 'soon' }, 'expires_in'],
      [{ name: 'x', scopes: ['read'], organization: 'other' }, 'organization'],
    ] as const) {
      const res = await as(admin).create(body);
      expect([res.status, res.body.error.code]).toEqual([422, 'validation_failed']);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const duplicate = await as(admin).create({ name: 'admin', scopes: ['read'] });
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, 'conflict']);
    expect((await as(admin).list()).body.data.length).toBe(before);
  });

  test('revoking ends the token at once; revoking again changes nothing; another organization’s token is not found', async () => {
    const created = (await as(admin).create({ name: 'short', scopes: ['read'] })).body.data;
    const revoked = await as(admin).revoke(created.id);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).not.toBeNull();
    expect((await bosun.api.get('/api/v1/servers').set(bearer(created.token))).status).toBe(401);
    const again = await as(admin).revoke(created.id);
    expect([again.status, again.body.data.revoked_at]).toEqual([200, revoked.body.data.revoked_at]);
    // The name is free again.
    expect((await as(admin).create({ name: 'short', scopes: ['read'] })).status).toBe(201);

    const stranger = await bosun.token('tokens-elsewhere', ['admin']);
    const theirs = await as(stranger).revoke(created.id);
    expect([theirs.status, theirs.body.error.code]).toEqual([404, 'not_found']);
    expect((await as(stranger).list()).body.data.map((t: { name: string }) => t.name)).not.toContain('short');
    // A malformed id names nothing, like an unknown one.
    expect((await as(admin).revoke('nope')).status).toBe(404);
  });

  test('an administrator can revoke the very token it uses: that request is its last', async () => {
    const own = (await as(admin).create({ name: 'self', scopes: ['admin'] })).body.data;
    const res = await as(own.token).revoke(own.id);
    expect([res.status, res.body.data.current]).toEqual([200, true]);
    expect((await as(own.token).list()).status).toBe(401);
    // The server list of the organization is untouched by all this.
    expect((await userWithToken(bosun, admin).listServers()).data).toEqual([]);
  });
});
