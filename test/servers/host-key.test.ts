import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { Sshd } from '../support/sshd';

describe('host keys are trusted on first use and a change is refused', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('pinners');
  });
  afterAll(async () => {
    await sshd.stop();
    await bosun.stop();
  });

  const server = async (id: string) => (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data;

  test('a changed host key fails verification without retries; trusting it anew verifies again', async () => {
    const { host, port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'pinned', host, port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    const first = await eventually(() => server(id), (s) => s.status === 'verified');
    const pinned = first.host_key_fingerprint as string;

    await sshd.stop();
    sshd.rotateHostKey();
    await sshd.resume();

    expect((await bosun.api.post(`/api/v1/servers/${id}/verify`).set(bearer(token))).status).toBe(202);
    const handle = bosun.temporal.workflow.getHandle(`server-verify-${id}`);
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: expect.stringMatching(/Host key .* changed/) } });
    const refused = await server(id);
    expect(refused.status).toBe('unverified');
    expect(refused.last_error).toContain(`expected ${pinned}`);
    expect(refused.host_key_fingerprint).toBe(pinned);

    const trusted = await bosun.api.post(`/api/v1/servers/${id}/verify`).set(bearer(token)).send({ trust_new_host_key: true });
    expect(trusted.status).toBe(202);
    // The old pin stays until the new key is actually seen and pinned: there is never a window with no pin.
    expect(trusted.body.data.host_key_fingerprint).toBe(pinned);
    expect((await server(id)).host_key_fingerprint).not.toBeNull();
    const after = await eventually(() => server(id), (s) => s.status === 'verified');
    expect(after.host_key_fingerprint).toMatch(/^SHA256:/);
    expect(after.host_key_fingerprint).not.toBe(pinned);
  });

  test('the verify body is validated like any other', async () => {
    const res = await bosun.api.post('/api/v1/servers/000000000000000000000000/verify').set(bearer(token)).send({ trust: 'yes' });
    expect(res.status).toBe(422);
  });
});
