import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { connectSocket } from '../support/socket';

describe('limits: runs per organization, subscriptions per connection, steps per deployment', () => {
  let bosun: Bosun;
  let token: string;
  let deploymentId: string;

  beforeAll(async () => {
    bosun = await startBosun({ maxActiveRuns: 2, subscriptionsPerConnection: 2 });
    token = await bosun.token('limited');
    const serverId = await userWithToken(bosun, token).addServer({ host: '127.0.0.13' });
    deploymentId = (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'slow', server_id: serverId, steps: [{ name: 'wait', command: 'sleep 30' }] })).body.data.id;
  });
  afterAll(() => bosun.stop());

  const trigger = () => bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
  const cancel = (runId: string) => bosun.api.post(`/api/v1/deployments/${deploymentId}/runs/${runId}/cancel`).set(bearer(token));

  test('an organization with its limit of runs queued or running gets 429 with Retry-After; a finished run frees a place', async () => {
    const first = await trigger();
    const second = await trigger();
    expect([first.status, second.status]).toEqual([202, 202]);
    const third = await trigger();
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('30');
    expect(third.body.error).toEqual({ code: 'rate_limited', message: expect.stringContaining('already has 2 runs queued or running') });
    expect((await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs`).set(bearer(token))).body.meta.total).toBe(2);

    // Subscriptions: two per connection here; a third is refused until one is dropped.
    const socket = await connectSocket(bosun.url, token);
    try {
      expect(await socket.emitWithAck('subscribe', { run_id: first.body.run_id })).toMatchObject({ ok: true });
      expect(await socket.emitWithAck('subscribe', { run_id: second.body.run_id })).toMatchObject({ ok: true });
      expect(await socket.emitWithAck('subscribe', { run_id: first.body.run_id })).toMatchObject({ ok: true });

      await cancel(second.body.run_id);
      await eventually(async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${second.body.run_id}`).set(bearer(token))).body.data.status, (s) => s === 'cancelled');
      const fourth = await trigger();
      expect(fourth.status).toBe(202);
      expect(await socket.emitWithAck('subscribe', { run_id: fourth.body.run_id })).toEqual({
        ok: false,
        error: { code: 'rate_limited', message: 'At most 2 subscriptions per connection: unsubscribe from some first' },
      });
      await socket.emitWithAck('unsubscribe', { run_id: second.body.run_id });
      expect(await socket.emitWithAck('subscribe', { run_id: fourth.body.run_id })).toMatchObject({ ok: true });
      await Promise.all([cancel(first.body.run_id), cancel(fourth.body.run_id)]);
    } finally {
      socket.close();
    }
  });

  test('a subscription to a pipeline run counts in the same limit', async () => {
    // The runs the test before left behind end first: they count in the organization's runs.
    await eventually(async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs`).set(bearer(token))).body.data, (runs: Array<{ status: string }>) => runs.every((r) => ['success', 'failed', 'cancelled'].includes(r.status)));
    const serverId = (await bosun.api.get(`/api/v1/deployments/${deploymentId}`).set(bearer(token))).body.data.server_id;
    await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: 'quick', server_id: serverId, steps: [{ name: 'say', command: 'echo ok' }] });
    const pipelineId = (await bosun.api.post('/api/v1/pipelines').set(bearer(token)).send({ name: 'limited', stages: [{ name: 'say', deployment: 'quick' }] })).body.data.id;
    const runToEnd = async () => {
      const runId = (await bosun.api.post(`/api/v1/pipelines/${pipelineId}/run`).set(bearer(token)).send({})).body.run_id as string;
      return eventually(async () => (await bosun.api.get(`/api/v1/pipelines/${pipelineId}/runs/${runId}`).set(bearer(token))).body.data, (run) => run.status === 'success');
    };
    const [first, second] = [await runToEnd(), await runToEnd()];
    const socket = await connectSocket(bosun.url, token);
    try {
      expect(await socket.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: first.id })).toMatchObject({ ok: true });
      expect(await socket.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: second.id })).toMatchObject({ ok: true });
      expect(await socket.emitWithAck('subscribe', { run_id: first.stages[0].deployment_run_id })).toEqual({
        ok: false,
        error: { code: 'rate_limited', message: 'At most 2 subscriptions per connection: unsubscribe from some first' },
      });
      await socket.emitWithAck('unsubscribe_pipeline_run', { pipeline_run_id: second.id });
      expect(await socket.emitWithAck('subscribe', { run_id: first.stages[0].deployment_run_id })).toMatchObject({ ok: true });
      expect(await socket.emitWithAck('subscribe_pipeline_run', { pipeline_run_id: second.id })).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    } finally {
      socket.close();
    }
  });

  test('a deployment holds at most 100 steps', async () => {
    const res = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'huge', server_id: (await bosun.api.get(`/api/v1/deployments/${deploymentId}`).set(bearer(token))).body.data.server_id,
      steps: Array.from({ length: 101 }, (_, i) => ({ name: `s${i}`, command: 'true' })),
    });
    expect([res.status, res.body.error.details]).toEqual([422, [{ path: 'steps', message: 'at most 100 steps' }]]);
  });
});
