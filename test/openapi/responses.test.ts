import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { personToken, userWithToken } from '../support/client';
import { responseChecker } from '../support/openapi';

/** Real answers of every kind, each checked against the document's response for its route and status. */
describe('responses match the OpenAPI document', () => {
  let bosun: Bosun;
  let admin: string;
  let serverId: string;
  let expectDocumented: ReturnType<typeof responseChecker>;

  beforeAll(async () => {
    bosun = await startBosun({ verifyMaxAttempts: 1 });
    admin = await bosun.token('openapi-responses');
    serverId = await userWithToken(bosun, admin).addServer();
    expectDocumented = responseChecker((await bosun.api.get('/api/v1/openapi.json')).body);
  });
  afterAll(() => bosun.stop());

  const as = (token: string) => ({
    get: async (path: string) => documented(await bosun.api.get(path).set(bearer(token))),
    post: async (path: string, body?: object) => documented(await bosun.api.post(path).set(bearer(token)).send(body)),
    put: async (path: string, body: object) => documented(await bosun.api.put(path).set(bearer(token)).send(body)),
    patch: async (path: string, body: object) => documented(await bosun.api.patch(path).set(bearer(token)).send(body)),
    delete: async (path: string) => documented(await bosun.api.delete(path).set(bearer(token))),
  });
  const documented = <R extends Parameters<typeof expectDocumented>[0]>(res: R) => {
    expectDocumented(res);
    return res;
  };

  test('servers: add, list, read (with a fingerprint), verify, delete', async () => {
    const api = as(admin);
    const added = await api.post('/api/v1/servers', { title: 'pw', host: '127.0.0.1', port: 1, username: 'deploy', auth_method: 'password', password: 'pw-secret' });
    expect(added.status).toBe(201);
    expect((await api.get('/api/v1/servers?per_page=5')).status).toBe(200);
    const verified = await api.get(`/api/v1/servers/${serverId}`);
    expect(verified.body.data.fingerprint).toMatchObject({ cpu_cores: expect.any(Number) });
    expect((await api.post(`/api/v1/servers/${added.body.data.id}/verify`)).status).toBe(202);
    expect((await api.delete(`/api/v1/servers/${added.body.data.id}`)).status).toBe(204);
  });

  test('deployments and runs: define, change, trigger (unwrapped 202), read the run with output, list, cancel a finished one (409)', async () => {
    const api = as(admin);
    const created = await api.post('/api/v1/deployments', { name: 'openapi-release', server_id: serverId, steps: [{ name: 'hello', command: 'echo hello' }] });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await api.patch(`/api/v1/deployments/${id}`, { steps: [{ name: 'hello', command: 'echo hello', timeout_seconds: 30 }] })).status).toBe(200);
    expect((await api.get(`/api/v1/deployments/${id}`)).status).toBe(200);
    expect((await api.get('/api/v1/deployments')).status).toBe(200);

    const trigger = await api.post(`/api/v1/deployments/${id}/run`);
    expect(trigger.status).toBe(202);
    expect(trigger.body).toMatchObject({ run_id: expect.any(String), status: 'queued' });
    const run = await userWithToken(bosun, admin).runToEnd(id);
    expect(run.status).toBe('success');
    const read = await api.get(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}`);
    expect(read.body.data.steps[0].output).toContain('hello');
    expect((await api.get(`/api/v1/deployments/${id}/runs`)).status).toBe(200);
    expect((await api.post(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}/cancel`)).status).toBe(409);
    expect((await api.delete(`/api/v1/deployments/${id}`)).status).toBe(204);
  });

  test('conversations: start, read with steps, list, approve and reject, follow up, cancel', async () => {
    const api = as(admin);
    // People decide on steps.
    const person = as((await personToken(userWithToken(bosun, admin), 'Rita', 'operator')).token);
    // Read steps wait for approval under this policy, so nothing here changes the server.
    expect((await api.put('/api/v1/policy', { allow_destructive: false, require_approval_for: ['read'] })).status).toBe(200);
    const started = await api.post('/api/v1/conversations', { chatable_type: 'server', chatable_id: serverId, message: 'show uptime and disk usage' });
    expect(started.status).toBe(201);
    const id = started.body.data.id as string;
    const waiting = async () =>
      eventually(async () => (await api.get(`/api/v1/conversations/${id}`)).body.data, (c) => c.status === 'awaiting_approval', 60_000);
    const first = await waiting();
    expect((await api.post(`/api/v1/conversations/${id}/steps/${first.steps[0].id}/approve`)).status).toBe(403);
    expect((await person.post(`/api/v1/conversations/${id}/steps/${first.steps[0].id}/approve`)).status).toBe(202);
    const second = await eventually(async () => (await api.get(`/api/v1/conversations/${id}`)).body.data, (c) => c.steps[0].status === 'completed' && c.status === 'awaiting_approval', 60_000);
    expect((await person.post(`/api/v1/conversations/${id}/steps/${second.steps[1].id}/reject`)).status).toBe(202);
    const ended = await eventually(async () => (await api.get(`/api/v1/conversations/${id}`)).body.data, (c) => c.status === 'cancelled', 60_000);
    expect(ended.steps[0].execution_log).not.toBe('');
    expect((await api.get(`/api/v1/conversations?chatable_type=server&chatable_id=${serverId}`)).body.data).toHaveLength(1);
    expect((await api.post(`/api/v1/conversations/${id}/messages`, { message: 'show uptime' })).status).toBe(409);
    expect((await api.post(`/api/v1/conversations/${id}/cancel`)).status).toBe(409);
    expect((await api.get('/api/v1/policy')).status).toBe(200);

    expect((await api.put('/api/v1/policy', { allow_destructive: false, require_approval_for: [] })).status).toBe(200);
    const other = await api.post('/api/v1/conversations', { chatable_type: 'server', chatable_id: serverId, message: 'show uptime' });
    await eventually(async () => (await api.get(`/api/v1/conversations/${other.body.data.id}`)).body.data, (c) => c.status === 'completed', 60_000);
    expect((await api.post(`/api/v1/conversations/${other.body.data.id}/messages`, { message: 'show disk usage' })).status).toBe(202);
    expect((await api.post(`/api/v1/conversations/${other.body.data.id}/cancel`)).status).toBeLessThan(500);
  });

  test('migration plans and secrets', async () => {
    const api = as(admin);
    const target = await api.post('/api/v1/servers', { title: 'target', host: '127.0.0.2', port: 1, username: 'deploy', auth_method: 'password', password: 'pw-secret' });
    const plan = await api.post('/api/v1/migration-plans', { title: 'move', source_server_id: serverId, target_server_id: target.body.data.id });
    expect(plan.status).toBe(201);
    expect((await api.get(`/api/v1/migration-plans/${plan.body.data.id}`)).body.data.source).toMatchObject({ id: serverId });
    expect((await api.get('/api/v1/migration-plans')).status).toBe(200);
    expect((await api.delete(`/api/v1/migration-plans/${plan.body.data.id}`)).status).toBe(204);

    expect((await api.put('/api/v1/secrets/DB_PASSWORD', { value: 'hunter22' })).status).toBe(200);
    expect((await api.get('/api/v1/secrets')).body.data).toEqual([{ name: 'DB_PASSWORD', updated_at: expect.any(String) }]);
    expect((await api.delete('/api/v1/secrets/DB_PASSWORD')).status).toBe(204);
  });

  test('errors: 400, 401, 403, 404, 409, 415 and 422 are the documented envelope', async () => {
    const api = as(admin);
    expect((await api.get('/api/v1/servers/0123456789abcdef01234567')).status).toBe(404);
    expect((await api.post('/api/v1/servers', { title: '', host: 'bad host', port: 70000 })).status).toBe(422);
    expect((await api.get('/api/v1/servers?per_page=1000')).status).toBe(422);
    const server = { title: 'dup', host: '127.0.0.1', port: 2, username: 'deploy', auth_method: 'password', password: 'pw-secret' };
    expect((await api.post('/api/v1/servers', server)).status).toBe(201);
    expect((await api.post('/api/v1/servers', server)).status).toBe(409);
    expect((await as('bsn_unknown').get('/api/v1/servers')).status).toBe(401);
    expect((await as(await bosun.token('openapi-responses', ['read'])).post('/api/v1/servers', server)).status).toBe(403);
    expect(documented(await bosun.api.post('/api/v1/servers').set(bearer(admin)).set('Content-Type', 'application/json').send('{"title":')).status).toBe(400);
    expect(documented(await bosun.api.post('/api/v1/servers').set(bearer(admin)).set('Content-Type', 'text/plain').send('title')).status).toBe(415);
  });

  test('operations: /healthz, /readyz, /metrics', async () => {
    expect(documented(await bosun.api.get('/healthz')).status).toBe(200);
    expect(documented(await bosun.api.get('/readyz')).status).toBe(200);
    expect(documented(await bosun.api.get('/metrics')).status).toBe(200);
    expect(documented(await bosun.api.get('/api/v1/openapi.json')).status).toBe(200);
  });
});
