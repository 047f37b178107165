import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';

const nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
const kernel = execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim();
const osRelease = readFileSync('/etc/os-release', 'utf8');
const osField = (name: string) => new RegExp(`^${name}="?([^"\\n]*)"?$`, 'm').exec(osRelease)?.[1];

describe('adding a server and verifying it over SSH', () => {
  let bosun: Bosun;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun({ verifyMaxAttempts: 2 });
    token = await bosun.token('acme');
  });
  afterAll(() => bosun.stop());

  const getServer = async (id: string) => (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data;
  const addServer = (body: object) => bosun.api.post('/api/v1/servers').set(bearer(token)).send(body);

  /** The attempt numbers of the verifyServer activity, read from the workflow's history in Temporal. */
  async function verifyAttempts(serverId: string): Promise<number[]> {
    const events = (await bosun.temporal.workflow.getHandle(`server-verify-${serverId}`).fetchHistory()).events ?? [];
    const verifyScheduled = new Set(
      events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'verifyServer').map((e) => String(e.eventId)),
    );
    return events
      .filter((e) => verifyScheduled.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId)))
      .map((e) => e.activityTaskStartedEventAttributes!.attempt!);
  }

  test('with a private key it becomes verified and reports this machine’s real fingerprint', async () => {
    const { host, port, username, privateKey } = bosun.sshd;
    const created = await addServer({ title: 'web-1', host, port, username, auth_method: 'private_key', private_key: privateKey });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ title: 'web-1', host, port, username, status: 'unverified' });
    expect(created.headers.location).toBe(`/api/v1/servers/${created.body.data.id}`);
    expect(JSON.stringify(created.body)).not.toContain('PRIVATE KEY');

    const server = await eventually(() => getServer(created.body.data.id), (s) => s.status !== 'unverified' || !!s.last_error);
    expect(server.status).toBe('verified');
    expect(server.last_error).toBeNull();
    expect(server.fingerprint.os).toEqual({ name: osField('NAME'), version: osField('VERSION_ID'), kernel });
    expect(server.fingerprint.cpu_cores).toBe(nproc);
    expect(server.fingerprint.ram).toMatch(/^\d+(\.\d)? (MiB|GiB|TiB)$/);
    expect(server.fingerprint.disk).toMatch(/^\d+(\.\d)? (GiB|TiB|PiB)$/);
    expect(server.host_key_fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(server.verified_at).not.toBeNull();
  });

  test('the private key is stored encrypted, never in clear text', async () => {
    const { host, port, username, privateKey } = bosun.sshd;
    const created = await addServer({ title: 'stored', host: 'localhost', port, username, auth_method: 'private_key', private_key: privateKey });
    const raw = await mongoose.connection.db!.collection('servers').findOne({ _id: new mongoose.Types.ObjectId(created.body.data.id as string) });
    const keyBody = privateKey.split('\n')[1]!;
    expect(JSON.stringify(raw)).not.toContain(keyBody);
    expect(raw!.credentials).toMatch(/^v1:/);
    expect(host).not.toBe('localhost');
  });

  test('with a password it becomes verified', async () => {
    const { port, username, password } = bosun.sshd;
    const created = await addServer({ title: 'pw', host: '127.0.0.6', port, username: username, auth_method: 'password', password });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain(password);
    const server = await eventually(() => getServer(created.body.data.id), (s) => s.status === 'verified' || !!s.last_error?.includes('fail'));
    expect(server.status).toBe('verified');
  });

  test('an encrypted private key works with its passphrase, and is refused without it', async () => {
    const { port, username } = bosun.sshd;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bosun-enc-'));
    const file = path.join(dir, 'key');
    // Same user key, re-encrypted with a passphrase (ssh-keygen -p rewrites it in place).
    writeFileSync(file, bosun.sshd.privateKey, { mode: 0o600 });
    execFileSync('ssh-keygen', ['-q', '-p', '-N', 'open sesame', '-f', file]);
    const encrypted = readFileSync(file, 'utf8');
    const body = { title: 'enc', host: '127.0.0.8', port, username, auth_method: 'private_key', private_key: encrypted };

    const without = await addServer(body);
    expect(without.status).toBe(422);
    expect(without.body.error.details).toEqual([{ path: 'passphrase', message: expect.stringContaining('encrypted') }]);
    const wrong = await addServer({ ...body, passphrase: 'nope' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details[0].path).toBe('passphrase');

    const created = await addServer({ ...body, passphrase: 'open sesame' });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain('open sesame');
    expect((await eventually(() => getServer(created.body.data.id), (s) => s.status === 'verified' || !!s.last_error)).status).toBe('verified');
  });

  test('a wrong password leaves it unverified with a readable error, without retrying', async () => {
    const { port, username } = bosun.sshd;
    const created = await addServer({ title: 'bad-pw', host: '127.0.0.2', port, username, auth_method: 'password', password: 'wrong' });
    const id = created.body.data.id as string;
    const handle = bosun.temporal.workflow.getHandle(`server-verify-${id}`);
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: expect.stringMatching(/^Verification failed/) } });
    const server = await getServer(id);
    expect(server.status).toBe('unverified');
    expect(server.last_error).toMatch(/Authentication to .* failed/);
    expect(await verifyAttempts(id)).toEqual([1]);
    // The secret appears nowhere a person or a log can read: not the error, not the workflow history.
    expect(JSON.stringify(server)).not.toContain('wrong');
    expect(JSON.stringify((await handle.fetchHistory()).events)).not.toContain('"wrong"');
  });

  test('a wrong private key is rejected by the server and not retried', async () => {
    const { port, username } = bosun.sshd;
    const otherKey = execFileSync('sh', ['-c', 'd=$(mktemp -d) && ssh-keygen -q -t ed25519 -N "" -f $d/k && cat $d/k && rm -r $d'], { encoding: 'utf8' });
    const created = await addServer({ title: 'bad-key', host: '127.0.0.3', port, username, auth_method: 'private_key', private_key: otherKey });
    const id = created.body.data.id as string;
    await expect(bosun.temporal.workflow.getHandle(`server-verify-${id}`).result()).rejects.toMatchObject({
      cause: { type: 'VerificationFailed', cause: { cause: { type: 'SshAuthenticationFailed', nonRetryable: true } } },
    });
    expect(await verifyAttempts(id)).toEqual([1]);
    const server = await getServer(id);
    expect(server.status).toBe('unverified');
    expect(server.last_error).toMatch(/rejected the credentials/);
  });

  test('an unreachable host is retried with backoff, then left unverified with the reason', async () => {
    const created = await addServer({ title: 'nobody-home', host: '127.0.0.1', port: 1, username: 'deploy', auth_method: 'password', password: 'x' });
    const id = created.body.data.id as string;
    const handle = bosun.temporal.workflow.getHandle(`server-verify-${id}`);
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: expect.stringMatching(/refused/) } });
    const server = await getServer(id);
    expect(server.status).toBe('unverified');
    expect(server.last_error).toMatch(/Connection to deploy@127.0.0.1:1 refused/);
    // Temporal records an activity's retries as one start event carrying the final attempt number.
    expect(await verifyAttempts(id)).toEqual([2]);
  });

  test('re-verifying a server runs verification again', async () => {
    const { host, port, username, privateKey } = bosun.sshd;
    const created = await addServer({ title: 'again', host: '127.0.0.4', port, username, auth_method: 'private_key', private_key: privateKey });
    const id = created.body.data.id as string;
    await eventually(() => getServer(id), (s) => s.status === 'verified');
    const first = await getServer(id);
    const again = await bosun.api.post(`/api/v1/servers/${id}/verify`).set(bearer(token));
    expect(again.status).toBe(202);
    expect(again.body.data.id).toBe(id);
    const second = await eventually(() => getServer(id), (s) => s.verified_at !== first.verified_at);
    expect(second.status).toBe('verified');
    expect(second.host).not.toBe(host);
  });

  test('deleting a server removes it, and a health monitor of its own from before the sweeps is stopped', async () => {
    const { port, username, privateKey } = bosun.sshd;
    const created = await addServer({ title: 'doomed', host: '127.0.0.5', port, username, auth_method: 'private_key', private_key: privateKey });
    const id = created.body.data.id as string;
    await eventually(() => getServer(id), (s) => s.status === 'verified');
    // As an older Bosun left it: the server's own monitor, running (its organization's sweep watches the server anyway).
    const health = await bosun.temporal.workflow.start('serverHealthWorkflow', { taskQueue: bosun.taskQueue, workflowId: `server-health-${id}`, args: [{ serverId: id, organizationId: 'org', intervalSeconds: 3600 }] });
    expect((await bosun.api.delete(`/api/v1/servers/${id}`).set(bearer(token))).status).toBe(204);
    expect((await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).status).toBe(404);
    expect((await health.describe()).status.name).toBe('TERMINATED');
  });
});
