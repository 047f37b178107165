import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';

describe('people, service accounts, teams and role bindings: the edges', () => {
  let bosun: SharedBosun;
  let admin: string;
  const call = (token: string, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) => {
    const request = bosun.api[method](`/api/v1${path}`).set(bearer(token));
    return body ? request.send(body) : request;
  };
  const created = async (token: string, path: string, body: object) => {
    const res = await call(token, 'post', path, body);
    expect([path, res.status]).toEqual([path, 201]);
    return res.body.data as { id: string; token?: string };
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await bosun.token('people-org');
  });
  afterAll(() => bosun.stop());

  test('a disabled person’s tokens stop at once (401) and work again when enabled; deleting them revokes their tokens', async () => {
    const alice = await created(admin, '/people', { name: 'Alice', email: 'alice@example.com' });
    await created(admin, '/role-bindings', { role: 'viewer', subject: { type: 'person', id: alice.id } });
    const token = (await created(admin, `/people/${alice.id}/tokens`, { name: 'alice-laptop' })).token!;
    expect((await call(token, 'get', '/me')).body.data.identity).toEqual({ type: 'person', id: alice.id, name: 'Alice' });

    expect((await call(admin, 'patch', `/people/${alice.id}`, { disabled: true })).body.data).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    const refused = await call(token, 'get', '/servers');
    expect([refused.status, refused.body.error.message]).toEqual([401, "The token's identity is disabled"]);
    expect((await call(admin, 'post', `/people/${alice.id}/tokens`, { name: 'another' })).status).toBe(409);

    await call(admin, 'patch', `/people/${alice.id}`, { disabled: false });
    expect((await call(token, 'get', '/servers')).status).toBe(200);

    expect((await call(admin, 'delete', `/people/${alice.id}`)).status).toBe(204);
    expect((await call(token, 'get', '/servers')).status).toBe(401);
    expect((await call(admin, 'get', `/people/${alice.id}`)).status).toBe(404);
  });

  test('nobody disables or deletes themselves, and the organization always keeps an administrator (409)', async () => {
    const bob = await created(admin, '/people', { name: 'Bob' });
    const bobAdmin = await created(admin, '/role-bindings', { role: 'admin', subject: { type: 'person', id: bob.id } });
    const bobToken = (await created(admin, `/people/${bob.id}/tokens`, { name: 'bob' })).token!;
    const self = await call(bobToken, 'patch', `/people/${bob.id}`, { disabled: true });
    expect([self.status, self.body.error.message]).toEqual([409, 'You cannot disable yourself: ask another administrator']);
    expect((await call(bobToken, 'delete', `/people/${bob.id}`)).status).toBe(409);

    // The first administrator goes; Bob is the last one now.
    const me = (await call(admin, 'get', '/me')).body.data;
    expect((await call(bobToken, 'delete', `/service-accounts/${me.identity.id}`)).status).toBe(204);
    expect((await call(admin, 'get', '/servers')).status).toBe(401);
    for (const [method, path, body] of [
      ['delete', `/role-bindings/${bobAdmin.id}`, undefined],
      ['patch', `/role-bindings/${bobAdmin.id}`, { servers: { tags: ['web'] } }],
      ['patch', `/role-bindings/${bobAdmin.id}`, { role: 'viewer' }],
    ] as const) {
      const res = await call(bobToken, method, path, body);
      expect([method, path, res.status, res.body.error?.message]).toEqual([method, path, 409, expect.stringContaining('without an administrator')]);
    }

    // Through a team: its members count, and emptying it or deleting it is checked the same way.
    const team = await created(bobToken, '/teams', { name: 'admins', members: [bob.id] });
    await created(bobToken, '/role-bindings', { role: 'admin', subject: { type: 'team', id: team.id } });
    expect((await call(bobToken, 'delete', `/role-bindings/${bobAdmin.id}`)).status).toBe(204);
    expect((await call(bobToken, 'patch', `/teams/${team.id}`, { members: [] })).status).toBe(409);
    expect((await call(bobToken, 'delete', `/teams/${team.id}`)).status).toBe(409);
    expect((await call(bobToken, 'get', '/me')).body.data).toMatchObject({ teams: [{ id: team.id, name: 'admins' }], bindings: [{ role: 'admin', subject: { type: 'team', id: team.id } }] });
  });

  test('bad input: an unknown role or tag, a member or deployment that is not the organization’s (422 naming the field); another organization’s subject (404)', async () => {
    // (The first administrator's account was deleted above: a new one.)
    admin = await bosun.token('people-org');
    const account = await created(admin, '/service-accounts', { name: 'nightly' });
    const role = await call(admin, 'post', '/role-bindings', { role: 'superuser', subject: { type: 'service_account', id: account.id } });
    expect([role.status, role.body.error.details]).toEqual([422, [{ path: 'role', message: expect.stringContaining('a role is one of viewer, operator') }]]);
    const tag = await call(admin, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account.id }, servers: { tags: ['Web Servers'] } });
    expect([tag.status, tag.body.error.details[0].path]).toEqual([422, 'servers.tags.0']);
    const deployment = await call(admin, 'post', '/role-bindings', { role: 'viewer', subject: { type: 'service_account', id: account.id }, deployments: ['0123456789abcdef01234567'] });
    expect([deployment.status, deployment.body.error.details]).toEqual([422, [{ path: 'deployments.0', message: 'no deployment of the organization has this id' }]]);
    const member = await call(admin, 'post', '/teams', { name: 'ghosts', members: [account.id] });
    expect([member.status, member.body.error.details]).toEqual([422, [{ path: 'members.0', message: 'no person of the organization has this id' }]]);

    const stranger = await bosun.token('another-org');
    const theirs = (await call(stranger, 'get', '/me')).body.data.identity.id;
    const foreign = await call(admin, 'post', '/role-bindings', { role: 'admin', subject: { type: 'service_account', id: theirs } });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
    expect((await call(admin, 'post', '/service-accounts', { name: 'nightly' })).status).toBe(409);
  });
});
