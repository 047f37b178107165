import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../support/bosun';
import { userAt } from '../support/client';
import { parseMetrics, valueOf } from '../support/metrics';
import { portForProcess } from '../support/ports';
import { BosunProcess, embeddedStackEnv, externalServicesEnv } from '../support/processes';
import { PrivateTemporal } from '../support/temporal';

const METRICS_TOKEN = 'scrape-me-0d1f7e';

describe('observability of separate API and worker processes', () => {
  const processes: BosunProcess[] = [];
  let temporal: PrivateTemporal;
  let env: NodeJS.ProcessEnv;
  let api: string;
  let workerMetrics: string;

  const launch = (role: 'api' | 'worker', extra: NodeJS.ProcessEnv) => {
    const p = new BosunProcess({ ...env, ...extra }, ['--role', role]);
    processes.push(p);
    return p;
  };
  const readyz = async (base: string) => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };

  beforeAll(async () => {
    temporal = await PrivateTemporal.start();
    env = { ...externalServicesEnv('observability'), TEMPORAL_ADDRESS: temporal.address, METRICS_TOKEN };
    const workerPort = await portForProcess();
    const worker = launch('worker', { WORKER_METRICS_PORT: String(workerPort) });
    const apiProcess = launch('api', { PORT: String(await portForProcess()) });
    api = (await apiProcess.ready()).replace('/api/v1', '');
    await worker.ready();
    workerMetrics = `http://127.0.0.1:${workerPort}`;
    expect(worker.stdout).toContain(`metrics     ${workerMetrics}/metrics`);
  }, 150_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await temporal?.destroy();
  });

  test('the worker serves its own metrics, with the Temporal SDK’s, to holders of METRICS_TOKEN only', async () => {
    expect((await fetch(`${workerMetrics}/metrics`)).status).toBe(401);
    expect((await fetch(`${workerMetrics}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    const scrape = async () => {
      const res = await fetch(`${workerMetrics}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      return res.text();
    };
    // The SDK's pollers report once they have polled.
    const text = await eventually(scrape, (t) => /^temporal_\w+/m.test(t), 30_000);
    const names = new Set(parseMetrics(text).map((s) => s.name));
    for (const name of ['bosun_ssh_pool_connections', 'bosun_ssh_connection_failures_total', 'process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds']) {
      expect(names).toContain(name);
    }
    expect([...names].filter((n) => n.startsWith('temporal_')).length).toBeGreaterThan(3);
    expect(text).not.toContain('Temporal SDK metrics unavailable');
    expect((await fetch(`${workerMetrics}/healthz`)).status).toBe(200);
    expect(await readyz(workerMetrics)).toEqual({ status: 200, body: { status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } } });
    // The scheme in any case; a known path with another method is a 405 naming those it takes.
    expect((await fetch(`${workerMetrics}/metrics`, { headers: { Authorization: `bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    const post = await fetch(`${workerMetrics}/healthz`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    // Its pollers have polled (above): the hand-off worker, which takes activities only by design, is no warning.
    const warnings = `${processes[0]!.stdout}\n${processes[0]!.stderr}`.split('\n').filter((line) => line.startsWith('{"level":') && line.endsWith('}'))
      .map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level >= 40).map((entry) => entry.msg);
    expect(warnings.filter((msg) => msg.startsWith('No workflows registered'))).toEqual([]);
  });

  test('the API wants the token on /metrics too; /healthz and /readyz stay open', async () => {
    expect((await fetch(`${api}/metrics`)).status).toBe(401);
    const res = await fetch(`${api}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    const samples = parseMetrics(await res.text());
    expect(samples.some((s) => s.name === 'bosun_socketio_connected_clients')).toBe(true);
    // An API process runs no worker: no SDK metrics, no SSH pool.
    expect(samples.some((s) => s.name.startsWith('temporal_'))).toBe(false);
    expect(valueOf(samples, 'bosun_ssh_pool_connections')).toBe(0);
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
  });

  test('/readyz answers 503 naming Temporal while it is down, and 200 again once it is back', async () => {
    expect(await readyz(api)).toEqual({ status: 200, body: { status: 'ready', checks: { mongodb: 'ok', temporal: 'ok' } } });
    await temporal.stop();
    try {
      const down = await eventually(() => readyz(api), (r) => r.status === 503, 30_000);
      expect(down.body.status).toBe('not_ready');
      expect(down.body.checks.mongodb).toBe('ok');
      expect(['failed', 'timeout']).toContain(down.body.checks.temporal);
      // Still up: a liveness probe must not restart a process for its dependency's outage.
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
    } finally {
      // Back whatever happened above: the other tests of this file find Temporal and both processes as they were.
      await temporal.resume();
    }
    await eventually(() => readyz(api), (r) => r.status === 200, 60_000);
    await eventually(() => readyz(workerMetrics), (r) => r.status === 200, 60_000);
  }, 120_000);
});

describe('npm start: one /metrics for everything, links to its own Temporal UI', () => {
  let bosun: BosunProcess;

  beforeAll(async () => {
    bosun = new BosunProcess(await embeddedStackEnv(mkdtempSync(path.join(os.tmpdir(), 'bosun-observability-'))));
  });
  // Gracefully: a SIGKILL would leave its mongod and Temporal dev server running after the tests.
  afterAll(() => bosun.stop('SIGINT'), 60_000);

  test('the API’s /metrics carries the worker’s metrics and the SDK’s; runs link to the dev server’s Web UI', async () => {
    const base = await bosun.ready();
    const root = base.replace('/api/v1', '');
    const ui = /Web UI (http:\/\/\S+)/.exec(bosun.stdout)![1]!;
    expect(bosun.stdout).toContain(`metrics     ${root}/metrics`);

    const ops = userAt(base, bosun.firstToken!);
    const serverId = await ops.addServer({ host: '127.0.0.10', title: 'ui' });
    const { id: deploymentId } = await ops.defineDeployment(serverId, [{ name: 'a', command: 'true' }], 'ui');
    const trigger = await ops.trigger(deploymentId);
    expect(trigger.temporal_ui_url).toBe(`${ui}/namespaces/default/workflows/deployment-run-${trigger.run_id}`);

    const text = await eventually(async () => (await fetch(`${root}/metrics`)).text(), (t) => /^temporal_\w+/m.test(t), 30_000);
    const samples = parseMetrics(text);
    expect(valueOf(samples, 'bosun_http_request_duration_seconds_count', { route: '/api/v1/deployments/:id/run', status: '202' })).toBe(1);
    // The worker's pool holds the server's connection: one registry for the API's and the worker's metrics.
    expect(valueOf(samples, 'bosun_ssh_pool_connections')).toBe(1);
    expect(samples.some((s) => s.name === 'bosun_socketio_connected_clients')).toBe(true);
  }, 150_000);
});
