import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { Sshd } from '../support/sshd';

describe('a verified server is watched: offline when unreachable, verified again when back', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;
  /** An sshd that logs each login and each command its sessions start (LogLevel VERBOSE). */
  let logged: Sshd | undefined;
  let ops: User | undefined;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 1 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('watchers');
  });
  afterAll(async () => {
    await sshd.stop();
    await logged?.stop({ dropSessions: true });
    ops?.close();
    await bosun.stop();
  });

  const status = async (id: string) => (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data;

  test('sshd stopped → offline with the reason; sshd back → verified', async () => {
    const { host, port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'watched', host, port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    await eventually(() => status(id), (s) => s.status === 'verified');
    const checked = await eventually(() => status(id), (s) => s.last_checked_at !== null && s.last_checked_at !== s.verified_at);
    expect(checked.status).toBe('verified');

    await sshd.stop();
    const offline = await eventually(() => status(id), (s) => s.status === 'offline', 20_000);
    expect(offline.last_error).toMatch(/refused/);

    await sshd.resume();
    const back = await eventually(() => status(id), (s) => s.status === 'verified', 20_000);
    expect(back.last_error).toBeNull();
    expect(back.fingerprint).not.toBeNull();
  });

  test('a health check that meets a different host key marks the server unverified', async () => {
    const { host, port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'rekeyed', host: '127.0.0.2', port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    const pinned = (await eventually(() => status(id), (s) => s.status === 'verified')).host_key_fingerprint;
    await sshd.stop();
    sshd.rotateHostKey();
    await sshd.resume();
    const distrusted = await eventually(() => status(id), (s) => s.status === 'unverified', 20_000);
    expect(distrusted.last_error).toMatch(/Host key .* changed/);
    expect(distrusted.host_key_fingerprint).toBe(pinned);
    expect(host).toBe('127.0.0.1');
  });

  test('a server is probed over the connection its run left pooled: one fresh login in five probes; its sshd gone with its sessions → offline at once', async () => {
    logged = await Sshd.startPrivate(['127.0.74.1'], { logConnections: true, config: ['LogLevel VERBOSE'] });
    ops = await asUser(bosun, 'health-pooled');
    const id = await ops.addServer({ host: '127.0.74.1', sshd: logged.info, title: 'pooled' });
    const deployment = await ops.define({ targets: { server_ids: [id] }, steps: [{ name: 'noop', command: 'true' }] });
    expect(await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id)).toMatchObject({ status: 'success' });

    const [logins0, commands0] = [logged.loginsAccepted(), logged.commandsStarted()];
    const probes = await eventually(async () => logged!.commandsStarted() - commands0, (n) => n >= 10, 40_000);
    // Every fifth probe logs in afresh (the host key and sshd's listener checked again); the others run `true` over the pooled connection.
    // (One more: a fresh probe's login may be in the log before its command.)
    expect(logged.loginsAccepted() - logins0).toBeLessThanOrEqual(Math.ceil(probes / 5) + 1);
    expect((await ops.getServer(id)).status).toBe('verified');

    await logged.stop({ dropSessions: true });
    const offline = await eventually(() => ops!.getServer(id), (s) => s.status === 'offline', 20_000);
    expect(offline.last_error).toMatch(/refused/);
  });
});
