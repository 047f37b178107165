import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { Sshd } from '../support/sshd';

describe('a verified server is watched: offline when unreachable, verified again when back', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 1 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('watchers');
  });
  afterAll(async () => {
    await sshd.stop();
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
});
