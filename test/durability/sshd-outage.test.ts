import { bearer, eventually, runEnded, startBosun, type Bosun } from '../support/bosun';
import { Sshd } from '../support/sshd';

describe('a server that drops off in the middle of a step', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('outage');
  });
  afterAll(async () => {
    await sshd.stop();
    await bosun.stop();
  });

  test('sshd stopped during a step and back within the retry window: the run completes', async () => {
    const { port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'flaky-host', host: '127.0.0.1', port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const serverId = created.body.data.id as string;
    await eventually(async () => (await bosun.api.get(`/api/v1/servers/${serverId}`).set(bearer(token))).body.data.status, (s) => s === 'verified');
    const deployment = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'survives', server_id: serverId,
      steps: [{ name: 'long', command: 'echo started; sleep 3; echo finished' }, { name: 'after', command: 'echo after' }],
    });
    const id = deployment.body.data.id as string;
    const trigger = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token));
    const read = async () => (await bosun.api.get(`/api/v1/deployments/${id}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data;

    await eventually(read, (r) => r.steps[0].output.includes('started'));
    await sshd.stop({ dropSessions: true });
    await eventually(read, (r) => /connection was lost|refused/.test(r.steps[0].output), 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    await sshd.resume();

    const run = await eventually(read, runEnded, 60_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0].output).toMatch(/^started\n[\s\S]*retrying[\s\S]*attempt \d+: the previous attempt was interrupted[\s\S]*started\nfinished\n$/);
    expect(run.steps[0].attempts).toBeGreaterThanOrEqual(2);
  });
});
