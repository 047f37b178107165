import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';

describe('when the API cannot reach Temporal', () => {
  let bosun: Bosun;
  let token: string;
  let deploymentId: string;

  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('outage');
    const ops = userWithToken(bosun, token);
    deploymentId = (await ops.defineDeployment(await ops.addServer(), [{ name: 'a', command: 'true' }], 'unreachable')).id;
    // The API's client only: the worker keeps its own connection.
    await bosun.temporal.connection.close();
    // Bosun has noticed (as its readiness endpoint says): from now on a trigger waits for its wake.
    await eventually(async () => (await bosun.api.get('/readyz')).status, (status) => status === 503);
  });
  afterAll(() => bosun.stop());

  test('a trigger answers 503 and leaves no run behind', async () => {
    const res = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token)).set('Idempotency-Key', 'retry-me');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('service_unavailable');
    expect((await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs`).set(bearer(token))).body.meta.total).toBe(0);
  });

  test('adding a server answers 503 and stores nothing', async () => {
    const { port, username, password } = bosun.sshd;
    const res = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'later', host: '127.0.0.2', port, username, auth_method: 'password', password,
    });
    expect(res.status).toBe(503);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).body.meta.total).toBe(1);
  });
});
