import net from 'node:net';
import { eventually } from '../support/bosun';
import { BosunProcess, externalServicesEnv, runCli } from '../support/processes';
import { portForProcess } from '../support/ports';
import { sharedServices } from '../support/shared';

describe('npm run api / npm run worker against existing MongoDB and Temporal', () => {
  const services = sharedServices();
  const processes: BosunProcess[] = [];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = externalServicesEnv('roles');
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  });

  const launch = (role: 'api' | 'worker', extra: NodeJS.ProcessEnv = {}) => {
    const p = new BosunProcess({ ...env, ...extra }, ['--role', role]);
    processes.push(p);
    return p;
  };

  test('an API process and a separate worker process verify a server together, starting no services', async () => {
    const worker = launch('worker');
    const api = launch('api', { PORT: String(await portForProcess()) });
    await worker.ready();
    const base = await api.ready();
    expect(worker.stdout).toContain('role: worker');
    expect(api.stdout).not.toContain('Web UI');
    // Production roles never mint or print a token; operators use the CLI.
    expect(api.firstToken).toBeUndefined();

    const token = (await runCli(['tokens', 'create', '--org', 'prod', '--name', 'ops', '--scopes', 'admin'], env)).stdout.trim();
    const { port, username, privateKey } = services.sshd;
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${base}/servers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'prod-1', host: '127.0.0.8', port, username, auth_method: 'private_key', private_key: privateKey }),
    });
    expect(created.status).toBe(201);
    const { data } = (await created.json()) as { data: { id: string } };
    const status = async () => ((await (await fetch(`${base}/servers/${data.id}`, { headers })).json()) as { data: { status: string } }).data.status;
    expect(await eventually(status, (s) => s === 'verified')).toBe('verified');

    expect(await api.stop('SIGTERM')).toBe(0);
    expect(await worker.stop('SIGTERM')).toBe(0);
  }, 120_000);

  test.each(['MONGODB_URI', 'TEMPORAL_ADDRESS', 'BOSUN_SECRET_KEY'])('a role without %s refuses to start and says why', async (name) => {
    const lonely = launch('api', { [name]: undefined });
    expect(await lonely.exited).toBe(1);
    expect(lonely.stderr).toContain('set MONGODB_URI, TEMPORAL_ADDRESS and BOSUN_SECRET_KEY');
  });

  test('an API whose port is taken refuses to start and says so, rather than running without listening', async () => {
    const port = await portForProcess();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const second = launch('api', { PORT: String(port), HOST: '127.0.0.1' });
      expect(await second.exited).toBe(1);
      expect(`${second.stdout}${second.stderr}`).toContain(`Cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      taken.close();
    }
  });
});
