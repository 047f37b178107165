import { eventually, runEnded } from '../support/bosun';
import { externalServicesEnv, Fleet } from '../support/processes';
import { sharedServices } from '../support/shared';
import { connectSocket, watchRun } from '../support/socket';

describe('runs survive the death of Bosun’s own processes', () => {
  const services = sharedServices();
  const fleet = new Fleet(externalServicesEnv('durable'));
  let token: string;
  let serverId: string;
  const launch = (role: 'api' | 'worker') => fleet.launch(role);
  const alive = (role: 'api' | 'worker') => fleet.alive(role)[0]!;
  const call = (base: string, method: string, route: string, body?: object) => fleet.call(base, method, route, body);

  beforeAll(async () => {
    token = await fleet.createToken('durable');
  });
  afterAll(() => fleet.stop());

  test('SIGKILL the worker in the middle of a long step; a new worker finishes the run', async () => {
    const worker = await launch('worker');
    const api = await launch('api');
    const base = `${await api.ready()}`;
    await worker.ready();
    const { port, username, privateKey } = services.sshd;
    serverId = (await call(base, 'POST', '/servers', { title: 'durable', host: '127.0.0.5', port, username, auth_method: 'private_key', private_key: privateKey })).data.id;
    await eventually(async () => (await call(base, 'GET', `/servers/${serverId}`)).data.status, (s) => s === 'verified');
    const deploymentId = (await call(base, 'POST', '/deployments', {
      name: 'long-haul', server_id: serverId,
      steps: [{ name: 'long', command: 'echo begin; sleep 4; echo end' }, { name: 'tail', command: 'echo tail' }],
    })).data.id;
    const runId = (await call(base, 'POST', `/deployments/${deploymentId}/run`)).run_id;
    const read = async () => (await call(base, 'GET', `/deployments/${deploymentId}/runs/${runId}`)).data;

    await eventually(read, (r) => r.steps[0].output.includes('begin'));
    await worker.stop('SIGKILL');
    await (await launch('worker')).ready();

    const run = await eventually(read, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0].output).toMatch(/^begin\n[\s\S]*--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nend\n$/);
    expect(run.steps[0].attempts).toBe(2);
    expect(run.steps[1].output).toBe('tail\n');
  }, 150_000);

  test('SIGKILL the worker long after a step began (its command followed by a heartbeating activity): the step runs again', async () => {
    const worker = alive('worker');
    const base = await alive('api').ready();
    const deploymentId = (await call(base, 'POST', '/deployments', {
      name: 'handed-off', server_id: serverId,
      steps: [{ name: 'long', command: 'echo begin; sleep 3; echo middle; sleep 3; echo end' }],
    })).data.id;
    const runId = (await call(base, 'POST', `/deployments/${deploymentId}/run`)).run_id;
    const read = async () => (await call(base, 'GET', `/deployments/${deploymentId}/runs/${runId}`)).data;

    // Past the first seconds, the command is followed by a heartbeating activity on this worker's own task queue.
    await eventually(read, (r) => r.steps[0].output.includes('middle'), 20_000);
    await worker.stop('SIGKILL');
    await (await launch('worker')).ready();

    const run = await eventually(read, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps[0].output).toMatch(/^begin\nmiddle\n[\s\S]*--- attempt 2: the previous attempt was interrupted; running the command again ---\nbegin\nmiddle\nend\n$/);
    expect(run.steps[0].attempts).toBe(2);
  }, 150_000);

  test('restart the API during a run: the run goes on, polling and live events resume', async () => {
    const first = alive('api');
    const base = await first.ready();
    const deploymentId = (await call(base, 'POST', '/deployments', {
      name: 'ticks', server_id: serverId, steps: [{ name: 'ticks', command: 'for i in 1 2 3 4 5 6 7 8; do echo t$i; sleep 0.5; done' }],
    })).data.id;
    const runId = (await call(base, 'POST', `/deployments/${deploymentId}/run`)).run_id;
    const before = await watchRun(await connectSocket(base.replace('/api/v1', ''), token), runId);
    await eventually(async () => before.events.length, (n) => n >= 3, 20_000);

    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await launch('api');
    const base2 = await second.ready();
    const polled = (await call(base2, 'GET', `/deployments/${deploymentId}/runs/${runId}`)).data;
    expect(['running', 'success']).toContain(polled.status);

    const after = await watchRun(await connectSocket(base2.replace('/api/v1', ''), token), runId);
    const finished = await eventually(
      async () => (after.events.at(-1)?.status ?? (after.snapshot as unknown as { status: string }).status),
      (s) => s === 'success',
      30_000,
    );
    expect(finished).toBe('success');
    const run = (await call(base2, 'GET', `/deployments/${deploymentId}/runs/${runId}`)).data;
    expect(run.steps[0].output).toBe('t1\nt2\nt3\nt4\nt5\nt6\nt7\nt8\n');
    expect(after.events.every((e, i) => e.seq === after.snapshotSeq + 1 + i)).toBe(true);
  }, 90_000);
});
