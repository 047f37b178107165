import { randomBytes } from 'node:crypto';
import { bearer, startBosun, type Bosun } from '../support/bosun';

describe('a worker whose master key differs from the API’s', () => {
  let bosun: Bosun;
  beforeAll(async () => {
    bosun = await startBosun({ workerMasterKey: randomBytes(32), verifyMaxAttempts: 5 });
  });
  afterAll(() => bosun.stop());

  test('fails verification at once with a message that names the cause, without retrying', async () => {
    const token = await bosun.token('keys');
    const { host, port, username, privateKey } = bosun.sshd;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'sealed', host, port, username, auth_method: 'private_key', private_key: privateKey,
    });
    const id = created.body.data.id as string;
    const handle = bosun.temporal.workflow.getHandle(`server-verify-${id}`);
    await expect(handle.result()).rejects.toMatchObject({
      cause: { cause: { cause: { type: 'CredentialsUnreadable', nonRetryable: true } } },
    });
    const server = (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data;
    expect(server.status).toBe('unverified');
    expect(server.last_error).toContain("this worker's BOSUN_SECRET_KEY differs from the API's");
    const events = (await handle.fetchHistory()).events ?? [];
    const attempts = events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []));
    // verifyServer once, then recordVerificationFailure once: no retry of what a retry cannot fix.
    expect(attempts).toEqual([1, 1]);
  });
});
