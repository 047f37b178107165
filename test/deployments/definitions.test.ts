import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { userWithToken } from '../support/client';

describe('deployment definitions', () => {
  let bosun: SharedBosun;
  let admin: string;
  let serverId: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await bosun.token('defs');
    serverId = await userWithToken(bosun, admin).addServer();
  });
  afterAll(() => bosun.stop());

  const create = (body: object, token = admin) => bosun.api.post('/api/v1/deployments').set(bearer(token)).send(body);

  test('create, list, read, change and delete', async () => {
    // An organization of its own: its list holds this deployment alone, whatever the other tests defined.
    const owner = await bosun.token('defs-crud');
    const ownServer = await userWithToken(bosun, owner).addServer();
    const created = await create({ name: 'web', server_id: ownServer, steps: [{ name: 'pull', command: 'true' }] }, owner);
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(created.body.data).toMatchObject({
      name: 'web', server_id: ownServer, last_run_at: null, last_run_status: null,
      steps: [{ name: 'pull', command: 'true', timeout_seconds: null, retries: 0, continue_on_error: false }],
    });

    const list = await bosun.api.get('/api/v1/deployments').set(bearer(owner));
    expect(list.body.meta).toEqual({ current_page: 1, per_page: 12, total: 1, last_page: 1 });
    expect(list.body.data[0]).toEqual({ id, name: 'web', server_id: ownServer, server_title: 'srv-127.0.0.1', last_run_at: null, last_run_status: null, targets: null, managed_by: null, created_at: expect.any(String) });

    const patched = await bosun.api.patch(`/api/v1/deployments/${id}`).set(bearer(owner)).send({ name: 'web-app', steps: [{ name: 'a', command: 'echo a', retries: 2 }] });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'web-app', steps: [{ name: 'a', retries: 2 }] });
    expect((await bosun.api.get(`/api/v1/deployments/${id}`).set(bearer(owner))).body.data.name).toBe('web-app');

    expect((await bosun.api.delete(`/api/v1/deployments/${id}`).set(bearer(owner))).status).toBe(204);
    expect((await bosun.api.get(`/api/v1/deployments/${id}`).set(bearer(owner))).status).toBe(404);
  });

  test.each([
    [{ name: 'x', server_id: 'nope', steps: [{ name: 'a', command: 'true' }] }, 'server_id'],
    [{ name: 'x', steps: [{ name: 'a', command: 'true' }] }, 'server_id'],
    [{ name: 'x', server_id: '0'.repeat(24), steps: [] }, 'steps'],
    [{ name: 'x', server_id: '0'.repeat(24), steps: [{ name: 'a', command: '' }] }, 'steps.0.command'],
    [{ name: 'x', server_id: '0'.repeat(24), steps: [{ name: 'a', command: 'true', timeout_seconds: 0 }] }, 'steps.0.timeout_seconds'],
    [{ name: 'x', server_id: '0'.repeat(24), steps: [{ name: 'a', command: 'true', retries: 11 }] }, 'steps.0.retries'],
    [{ name: 'x', server_id: '0'.repeat(24), steps: [{ name: 'a', command: 'true', shell: 'bash' }] }, 'steps.0'],
  ])('invalid definitions are 422 (%#)', async (body, path) => {
    const res = await create(body);
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  test('a server of another organization (or none) is refused as server_id', async () => {
    const other = await bosun.token('defs-other');
    const res = await create({ name: 'sneaky', server_id: serverId, steps: [{ name: 'a', command: 'true' }] }, other);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: 'server_id', message: 'No such server' }]);
  });

  test('names are unique within an organization (409)', async () => {
    expect((await create({ name: 'dup', server_id: serverId, steps: [{ name: 'a', command: 'true' }] })).status).toBe(201);
    expect((await create({ name: 'dup', server_id: serverId, steps: [{ name: 'a', command: 'true' }] })).status).toBe(409);
  });

  test('another organization sees none of it: 404 on every route', async () => {
    const id = (await create({ name: 'private', server_id: serverId, steps: [{ name: 'a', command: 'true' }] })).body.data.id;
    const run = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(admin));
    const other = await bosun.token('defs-stranger');
    const as = bearer(other);
    expect((await bosun.api.get('/api/v1/deployments').set(as)).body.meta.total).toBe(0);
    expect((await bosun.api.get(`/api/v1/deployments/${id}`).set(as)).status).toBe(404);
    expect((await bosun.api.patch(`/api/v1/deployments/${id}`).set(as).send({ name: 'mine' })).status).toBe(404);
    expect((await bosun.api.delete(`/api/v1/deployments/${id}`).set(as)).status).toBe(404);
    expect((await bosun.api.post(`/api/v1/deployments/${id}/run`).set(as)).status).toBe(404);
    expect((await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(as)).status).toBe(404);
    expect((await bosun.api.get(`/api/v1/deployments/${id}/runs/${run.body.run_id}`).set(as)).status).toBe(404);
    expect((await bosun.api.post(`/api/v1/deployments/${id}/runs/${run.body.run_id}/cancel`).set(as)).status).toBe(404);
  });

  test('scopes: read lists, deployments:write defines, deployments:run triggers', async () => {
    const id = (await create({ name: 'scoped', server_id: serverId, steps: [{ name: 'a', command: 'true' }] })).body.data.id;
    const reader = await bosun.token('defs', ['read']);
    const runner = await bosun.token('defs', ['deployments:run']);
    expect((await bosun.api.get('/api/v1/deployments').set(bearer(reader))).status).toBe(200);
    expect((await create({ name: 'nope', server_id: serverId, steps: [{ name: 'a', command: 'true' }] }, reader)).status).toBe(403);
    expect((await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(reader))).status).toBe(403);
    expect((await create({ name: 'nope', server_id: serverId, steps: [{ name: 'a', command: 'true' }] }, runner)).status).toBe(403);
    expect((await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(runner))).status).toBe(202);
  });

  test('a deployment on a server that was never verified cannot be triggered (409)', async () => {
    const unverified = await bosun.api.post('/api/v1/servers').set(bearer(admin)).send({
      title: 'never', host: '127.0.0.1', port: 1, username: 'nobody', auth_method: 'password', password: 'pw-pw',
    });
    const id = (await create({ name: 'blocked', server_id: unverified.body.data.id, steps: [{ name: 'a', command: 'true' }] })).body.data.id;
    const res = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(admin));
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/not been verified/);
  });
});
