import { Connection, WorkflowClient } from '@temporalio/client';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually, runEnded } from '../support/bosun';
import { externalServicesEnv, Fleet } from '../support/processes';
import { sharedServices } from '../support/shared';
import { connectSocket, watchRun, type BosunSocket } from '../support/socket';

type Run = { status: string; steps: Array<{ status: string; output: string; attempts: number }> };

describe('two API processes and two workers on one MongoDB and one Temporal', () => {
  const services = sharedServices();
  const fleet = new Fleet(externalServicesEnv('two-nodes'));
  const sockets: BosunSocket[] = [];
  let token: string;
  let temporal: Connection;
  let apis: string[];
  let deploymentId: string;

  const launch = (role: 'api' | 'worker') => fleet.launch(role);
  const call = (base: string, method: string, route: string, body?: object) => fleet.call(base, method, route, body);
  const workers = () => fleet.alive('worker');
  /** The worker process whose activity follows the run's running step, as Temporal sees it. */
  const workerRunning = async (runId: string) => {
    const handle = new WorkflowClient({ connection: temporal }).getHandle(deploymentRunWorkflowId(runId));
    const identity = await eventually(
      async () => (await handle.describe()).raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '',
      (id) => id !== '',
    );
    return workers().find((p) => identity.startsWith(`${p.child.pid}@`));
  };
  const trigger = async (via: string) => {
    const runId = (await call(via, 'POST', `/deployments/${deploymentId}/run`)).run_id as string;
    return { runId, read: async () => (await call(via, 'GET', `/deployments/${deploymentId}/runs/${runId}`)).data as Run };
  };

  beforeAll(async () => {
    token = await fleet.createToken('nodes');
    temporal = await Connection.connect({ address: services.temporalAddress });
    const started = await Promise.all([launch('api'), launch('api'), launch('worker'), launch('worker')]);
    apis = await Promise.all(started.slice(0, 2).map(async (p) => `${await p.ready()}`));
    await Promise.all(started.slice(2).map((p) => p.ready()));
    const { port, username, privateKey } = services.sshd;
    const serverId = (await call(apis[0]!, 'POST', '/servers', { title: 'two-nodes', host: '127.0.0.6', port, username, auth_method: 'private_key', private_key: privateKey })).data.id;
    await eventually(async () => (await call(apis[1]!, 'GET', `/servers/${serverId}`)).data.status, (s) => s === 'verified');
    deploymentId = (await call(apis[1]!, 'POST', '/deployments', {
      name: 'ticks', server_id: serverId, steps: [{ name: 'ticks', command: 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo t$i; sleep 0.5; done' }, { name: 'after', command: 'echo after' }],
    })).data.id;
  }, 180_000);
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await fleet.stop();
    await temporal?.close();
  });

  test('a client on API 1 follows a run triggered through API 2; SIGKILL of the worker running it loses nothing', async () => {
    const { runId, read } = await trigger(apis[1]!);
    const socket = await connectSocket(apis[0]!.replace('/api/v1', ''), token);
    sockets.push(socket);
    const watched = await watchRun(socket, runId);
    // Past the hand-off, the step is followed by a heartbeating activity of one worker: kill that one.
    await eventually(read, (r) => r.steps[0]!.output.includes('t5'));
    const executing = await workerRunning(runId);
    expect(executing).toBeDefined();
    await executing!.stop('SIGKILL');
    await launch('worker').then((p) => p.ready());

    const run = await eventually(read, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0]!.output).toMatch(/--- attempt 2: the previous attempt was interrupted; running the command again ---\nt1\n[\s\S]*t12\n$/);
    // API 1 relayed every change, in order, with no gap, up to the final state.
    await eventually(async () => watched.events.at(-1)?.status, (s) => s === 'success');
    expect(watched.events.every((e, i) => e.seq === watched.snapshotSeq + 1 + i)).toBe(true);
  }, 150_000);

  test('SIGTERM of the worker running a step (a deploy of Bosun itself): it exits cleanly and hands the step back; the run succeeds', async () => {
    const { runId, read } = await trigger(apis[0]!);
    await eventually(read, (r) => r.steps[0]!.output.includes('t5'));
    const executing = await workerRunning(runId);
    expect(executing).toBeDefined();
    // The step outlasts the shutdown grace time only if it is long: this one ends within it, or is handed back.
    expect(await executing!.stop('SIGTERM')).toBe(0);

    const run = await eventually(read, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s) => s.status)).toEqual(['success', 'success']);
    expect(workers().length).toBeGreaterThanOrEqual(1);
  }, 150_000);

  test('SIGTERM of a worker whose step outlasts the grace time: the command is stopped and run again by another worker', async () => {
    const long = (await call(apis[0]!, 'POST', '/deployments', {
      name: 'long', server_id: (await call(apis[0]!, 'GET', `/deployments/${deploymentId}`)).data.server_id,
      steps: [{ name: 'long', command: 'echo begin; sleep 20; echo end' }],
    })).data.id as string;
    await launch('worker').then((p) => p.ready());
    const runId = (await call(apis[0]!, 'POST', `/deployments/${long}/run`)).run_id as string;
    const read = async () => (await call(apis[1]!, 'GET', `/deployments/${long}/runs/${runId}`)).data as Run;
    await eventually(read, (r) => r.steps[0]!.output.includes('begin'));
    const executing = await workerRunning(runId);
    // Its 10 s of grace pass before the command's 20 s: it is stopped and handed back.
    expect(await executing!.stop('SIGTERM')).toBe(0);

    const run = await eventually(read, runEnded, 120_000);
    expect(run.status).toBe('success');
    expect(run.steps[0]!.output).toMatch(/^begin\n[\s\S]*--- this Bosun worker is shutting down: the command's process group was killed; another worker runs it again ---\n[\s\S]*begin\nend\n$/);
  }, 180_000);
});
