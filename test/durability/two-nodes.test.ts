import { Connection, WorkflowClient } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { changeStreamsOn } from '../support/change-streams';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually, runEnded } from '../support/bosun';
import type { User } from '../support/client';
import { longStep, tickingStep } from '../support/fixtures';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { sharedServices } from '../support/shared';

type Run = { status: string; steps: Array<{ status: string; output: string; attempts: number }> };

describe('two API processes and two workers on one MongoDB and one Temporal', () => {
  const services = sharedServices();
  // A stopping worker lets its steps run for 4 s (WORKER_SHUTDOWN_GRACE_SECONDS; 10 by default) before it hands them back.
  const bosun = new BosunProcesses({ ...externalServicesEnv('two-nodes'), WORKER_SHUTDOWN_GRACE_SECONDS: '4' });
  let temporal: Connection;
  /** The same user on API 1 and on API 2. */
  let viaApi1: User;
  let viaApi2: User;
  /** The two APIs' `…/api/v1`. */
  let bases: [string, string];
  let serverId: string;
  let ticks: string;

  const workers = () => bosun.alive('worker');
  /** The worker process whose activity follows the run's running step, as Temporal sees it. */
  const workerRunning = async (runId: string) => {
    const handle = new WorkflowClient({ connection: temporal }).getHandle(deploymentRunWorkflowId(runId));
    const identity = await eventually(
      async () => (await handle.describe()).raw.pendingActivities?.[0]?.lastWorkerIdentity ?? '',
      (id) => id !== '',
    );
    return workers().find((p) => identity.startsWith(`${p.child.pid}@`));
  };

  beforeAll(async () => {
    await bosun.createToken('nodes');
    temporal = await Connection.connect({ address: services.temporalAddress });
    const [api1, api2, ...started] = await Promise.all([bosun.launch('api'), bosun.launch('api'), bosun.launch('worker'), bosun.launch('worker')]);
    bases = [await api1!.ready(), await api2!.ready()];
    [viaApi1, viaApi2] = [bosun.userAt(bases[0]), bosun.userAt(bases[1])];
    await Promise.all(started.map((p) => p.ready()));
    serverId = await viaApi1.addServer({ host: '127.0.0.6', title: 'two-nodes' });
    ticks = (await viaApi2.defineDeployment(serverId, [tickingStep(12), { name: 'after', command: 'echo after' }], 'ticks')).id;
  }, 180_000);
  // Each test stops a worker: the next one starts with two, whatever happened before.
  beforeEach(async () => {
    while (workers().length < 2) await (await bosun.launch('worker')).ready();
  }, 120_000);
  afterAll(async () => {
    await bosun.stop();
    await temporal?.close();
  });

  test('a client on API 1 follows a run triggered through API 2; SIGKILL of the worker running it loses nothing', async () => {
    const { run_id: runId } = await viaApi2.trigger(ticks);
    const watched = await viaApi1.subscribe(runId);
    // Past the hand-off, the step is followed by a heartbeating activity of one worker: kill that one.
    await viaApi2.waitForRun(ticks, runId, (r: Run) => r.steps[0]!.output.includes('t5'), 30_000);
    const executing = await workerRunning(runId);
    expect(executing).toBeDefined();
    await executing!.stop('SIGKILL');
    await bosun.launch('worker').then((p) => p.ready());

    const run: Run = await viaApi2.waitForRun(ticks, runId, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0]!.output).toMatch(/--- attempt 2: the previous attempt was interrupted; running the command again ---\nt1\n[\s\S]*t12\n$/);
    // API 1 relayed every change, in order, with no gap, up to the final state.
    await eventually(async () => watched.events.at(-1)?.status, (s) => s === 'success');
    expect(watched.events.every((e, i) => e.seq === watched.snapshotSeq + 1 + i)).toBe(true);
  }, 150_000);

  test('SIGTERM of the worker running a step (a deploy of Bosun itself): it exits cleanly and hands the step back; the run succeeds', async () => {
    const { run_id: runId } = await viaApi1.trigger(ticks);
    await viaApi1.waitForRun(ticks, runId, (r: Run) => r.steps[0]!.output.includes('t5'), 30_000);
    const executing = await workerRunning(runId);
    expect(executing).toBeDefined();
    // The step outlasts the shutdown grace time only if it is long: this one ends within it, or is handed back.
    expect(await executing!.stop('SIGTERM')).toBe(0);

    const run: Run = await viaApi1.waitForRun(ticks, runId, runEnded, 90_000);
    expect(run.status).toBe('success');
    expect(run.steps.map((s) => s.status)).toEqual(['success', 'success']);
    expect(workers().length).toBeGreaterThanOrEqual(1);
  }, 150_000);

  test('SIGTERM of a worker whose step outlasts the grace time: the command is stopped and run again by another worker', async () => {
    const { id: long } = await viaApi1.defineDeployment(serverId, [longStep(12)], 'long');
    const { run_id: runId } = await viaApi1.trigger(long);
    await viaApi2.waitForRun(long, runId, (r: Run) => r.steps[0]!.output.includes('begin'), 30_000);
    const executing = await workerRunning(runId);
    // Its 4 s of grace pass before the command's 12 s: it is stopped and handed back.
    expect(await executing!.stop('SIGTERM')).toBe(0);

    const run: Run = await viaApi2.waitForRun(long, runId, runEnded, 120_000);
    expect(run.status).toBe('success');
    // The first attempt says why it stopped: the worker's own note, or (when the machine is so loaded
    // that the grace time ran out before the note was written) the next attempt's.
    expect(run.steps[0]!.output).toMatch(
      /^begin\n[\s\S]*(--- this Bosun worker is shutting down: the command's process group was killed; another worker runs it again ---|--- attempt 2: the previous attempt was interrupted; running the command again ---)\n[\s\S]*begin\nend\n$/,
    );
  }, 180_000);

  test('a right given or taken through API 1 holds on API 2, which keeps grants between requests, as soon as the change reaches it', async () => {
    const call = async (api: 0 | 1, token: string, method: string, path: string, body?: object) => {
      const res = await fetch(`${bases[api]}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
    };
    const admin = bosun.token;
    const carol = (await call(0, admin, 'POST', '/people', { name: 'Carol' })).body.data;
    const token = (await call(0, admin, 'POST', `/people/${carol.id}/tokens`, { name: 'carol' })).body.data.token as string;
    const servers = () => call(1, token, 'GET', '/servers').then((res) => res.status);
    // No role yet: refused on API 2, which now keeps what Carol may do.
    expect(await servers()).toBe(403);

    // A role binding made on API 1 (a change to role bindings).
    const binding = (await call(0, admin, 'POST', '/role-bindings', { role: 'viewer', subject: { type: 'person', id: carol.id } })).body.data;
    expect(await eventually(servers, (status) => status === 200, 15_000)).toBe(200);

    // Taken away through a team (a change to teams): the binding goes, a team of Carol gets the role.
    const team = (await call(0, admin, 'POST', '/teams', { name: 'watchers', members: [] })).body.data;
    await call(0, admin, 'POST', '/role-bindings', { role: 'viewer', subject: { type: 'team', id: team.id } });
    expect((await call(0, admin, 'DELETE', `/role-bindings/${binding.id}`)).status).toBe(204);
    expect(await eventually(servers, (status) => status === 403, 15_000)).toBe(403);
    expect((await call(0, admin, 'PATCH', `/teams/${team.id}`, { members: [carol.id] })).status).toBe(200);
    expect(await eventually(servers, (status) => status === 200, 15_000)).toBe(200);
  }, 60_000);

  test('each API process holds one change stream on MongoDB, the workers none: every open stream costs mongod on every write', async () => {
    const uri = bosun.env.MONGODB_URI!;
    const client = await new MongoClient(uri).connect();
    try {
      expect(bosun.alive('api')).toHaveLength(2);
      expect(await eventually(() => changeStreamsOn(client, client.db().databaseName), (count) => count === 2, 15_000)).toBe(2);
    } finally {
      await client.close();
    }
  });
});
