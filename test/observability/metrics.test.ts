import { freePort } from '../../src/embedded/ports';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { parseMetrics, valueOf, type Sample } from '../support/metrics';
import { connectSocket, type BosunSocket } from '../support/socket';

const UI = 'http://temporal-ui.example:8233';

describe('watching Bosun: /metrics, /readyz and links to the Temporal UI', () => {
  let bosun: Bosun;
  let token: string;
  let serverId: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await startBosun({ temporalUiUrl: UI });
    token = await bosun.token('watchers');
    serverId = await userWithToken(bosun, token).addServer();
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await bosun.stop();
  });

  const scrape = async (): Promise<Sample[]> => {
    const res = await bosun.api.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  };
  /** Scrapes until the metric's value is `expected` (change-stream metrics land a moment after the API answers). */
  const until = (name: string, labels: Record<string, string>, expected: number) =>
    eventually(async () => valueOf(await scrape(), name, labels), (v) => v === expected);
  const deployment = async (steps: Array<{ name: string; command: string }>) =>
    (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name: `d-${steps[0]!.name}`, server_id: serverId, steps })).body.data.id as string;

  test('/healthz and /readyz answer without a token: MongoDB and Temporal are reachable', async () => {
    expect((await bosun.api.get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await bosun.api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } });
  });

  test('HTTP requests are timed by route pattern and status, never by raw ids', async () => {
    const before = await scrape();
    const route = { method: 'GET', route: '/api/v1/servers/:id' };
    await bosun.api.get(`/api/v1/servers/${serverId}`).set(bearer(token)).expect(200);
    await bosun.api.get(`/api/v1/servers/${serverId}`).set(bearer(token)).expect(200);
    await bosun.api.get('/api/v1/servers/0123456789abcdef01234567').set(bearer(token)).expect(404);
    await bosun.api.get('/api/v1/servers').set(bearer(token)).expect(200);
    await bosun.api.get(`/api/v1/no-such-thing/${serverId}`).set(bearer(token)).expect(404);
    await bosun.api.get(`/api/v1/servers/${serverId}`).expect(401);

    const after = await scrape();
    const count = (samples: Sample[], labels: Record<string, string>) => valueOf(samples, 'bosun_http_request_duration_seconds_count', labels);
    expect(count(after, { ...route, status: '200' }) - count(before, { ...route, status: '200' })).toBe(2);
    expect(count(after, { ...route, status: '404' }) - count(before, { ...route, status: '404' })).toBe(1);
    expect(count(after, { method: 'GET', route: '/api/v1/servers', status: '200' }) - count(before, { method: 'GET', route: '/api/v1/servers', status: '200' })).toBe(1);
    // No route matched, or the request was refused before one did.
    expect(count(after, { route: '(unmatched)', status: '404' }) - count(before, { route: '(unmatched)', status: '404' })).toBe(1);
    expect(count(after, { route: '(unmatched)', status: '401' }) - count(before, { route: '(unmatched)', status: '401' })).toBe(1);
    const routes = new Set(after.filter((s) => s.name.startsWith('bosun_http_request_duration_seconds')).map((s) => s.labels.route));
    for (const label of routes) expect(label).not.toMatch(/[0-9a-f]{24}/);
    expect(after.find((s) => s.name === 'bosun_http_request_duration_seconds_bucket' && s.labels.le === '+Inf')).toBeDefined();
  });

  test('a run to success and a failed one: runs by final status, step durations by kind and status, its Temporal UI link', async () => {
    const ok = await deployment([{ name: 'hello', command: 'echo hello' }, { name: 'pause', command: 'sleep 0.3' }]);
    const bad = await deployment([{ name: 'broken', command: 'exit 3' }]);

    const trigger = await bosun.api.post(`/api/v1/deployments/${ok}/run`).set(bearer(token));
    expect(trigger.body.temporal_ui_url).toBe(`${UI}/namespaces/default/workflows/deployment-run-${trigger.body.run_id}`);
    const run = await eventually(
      async () => (await bosun.api.get(`/api/v1/deployments/${ok}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data,
      (r) => r.status === 'success',
    );
    expect(run.temporal_ui_url).toBe(`${UI}/namespaces/default/workflows/deployment-run-${run.id}`);
    const list = await bosun.api.get(`/api/v1/deployments/${ok}/runs`).set(bearer(token));
    expect(list.body.data[0].temporal_ui_url).toBe(run.temporal_ui_url);
    expect((await userWithToken(bosun, token).runToEnd(bad)).status).toBe('failed');

    await until('bosun_runs_finished_total', { status: 'success' }, 1);
    await until('bosun_runs_finished_total', { status: 'failed' }, 1);
    const samples = await until('bosun_step_duration_seconds_count', { kind: 'deployment' }, 3).then(scrape);
    expect(valueOf(samples, 'bosun_runs_finished_total', { status: 'cancelled' })).toBe(0);
    expect(valueOf(samples, 'bosun_step_duration_seconds_count', { kind: 'deployment', status: 'success' })).toBe(2);
    expect(valueOf(samples, 'bosun_step_duration_seconds_count', { kind: 'deployment', status: 'failed' })).toBe(1);
    // The paused step alone took at least 0.3 s.
    expect(valueOf(samples, 'bosun_step_duration_seconds_sum', { kind: 'deployment', status: 'success' })).toBeGreaterThanOrEqual(0.3);
    expect(valueOf(samples, 'bosun_step_duration_seconds_bucket', { kind: 'deployment', status: 'success', le: '0.1' })).toBeLessThanOrEqual(1);
    // The worker keeps the server's connection open for the next step.
    expect(valueOf(samples, 'bosun_ssh_pool_connections')).toBeGreaterThanOrEqual(1);
  });

  test('a conversation to completion: conversations by final status, conversation step durations, its Temporal UI link', async () => {
    const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: 'show uptime' });
    expect(started.status).toBe(201);
    const id = started.body.data.id as string;
    const done = await eventually(
      async () => (await bosun.api.get(`/api/v1/conversations/${id}`).set(bearer(token))).body.data,
      (c) => c.status === 'completed',
      60_000,
    );
    expect(done.temporal_ui_url).toBe(`${UI}/namespaces/default/workflows/conversation-${id}`);
    expect((await bosun.api.get('/api/v1/conversations').set(bearer(token))).body.data[0].temporal_ui_url).toBe(done.temporal_ui_url);

    await until('bosun_conversations_finished_total', { status: 'completed' }, 1);
    await until('bosun_step_duration_seconds_count', { kind: 'conversation', status: 'completed' }, done.steps.length);
  });

  test('connected Socket.IO clients are counted while they stay connected', async () => {
    const base = valueOf(await scrape(), 'bosun_socketio_connected_clients');
    sockets.push(await connectSocket(bosun.url, token), await connectSocket(bosun.url, token));
    expect(valueOf(await scrape(), 'bosun_socketio_connected_clients')).toBe(base + 2);
    // A refused handshake is no client.
    await expect(connectSocket(bosun.url, 'bsn_not-a-token')).rejects.toThrow();
    sockets.pop()!.close();
    await until('bosun_socketio_connected_clients', {}, base + 1);
  });

  test('SSH connections that cannot be opened are counted by kind', async () => {
    const { port, username } = bosun.sshd;
    const add = (host: string, serverPort: number, password: string) =>
      bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title: `bad-${host}`, host, port: serverPort, username, auth_method: 'password', password });
    await add('127.0.0.5', port, 'not-the-password').expect(201);
    await add('127.0.0.6', await freePort(0), 'whatever').expect(201);
    await eventually(async () => valueOf(await scrape(), 'bosun_ssh_connection_failures_total', { kind: 'authentication' }), (v) => v >= 1);
    await eventually(async () => valueOf(await scrape(), 'bosun_ssh_connection_failures_total', { kind: 'transport' }), (v) => v >= 1);
    expect(valueOf(await scrape(), 'bosun_ssh_connection_failures_total', { kind: 'host_key_mismatch' })).toBe(0);
  });

  test('default process metrics are there too', async () => {
    const names = new Set((await scrape()).map((s) => s.name));
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(names).toContain(name);
    }
  });
});
