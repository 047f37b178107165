import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { runCli, externalServicesEnv } from '../support/processes';
import { connectSocket } from '../support/socket';
import { createToken, listTokens, revokeToken } from '../../src/domain/tokens/service';

describe('token lifecycle: expiry, revocation at once (HTTP and open sockets), last use', () => {
  let bosun: Bosun;
  beforeAll(async () => {
    bosun = await startBosun();
  });
  afterAll(() => bosun.stop());

  const me = (token: string) => bosun.api.get('/api/v1/servers').set(bearer(token));

  test('a token that expires works until then; afterwards HTTP says it expired and its open socket is ended', async () => {
    const { token, expires_at } = await createToken({ org: 'lifecycle', name: 'short-lived', scopes: ['read'], expiresInSeconds: 3 });
    expect(expires_at!.getTime()).toBeGreaterThan(Date.now());
    expect((await me(token)).status).toBe(200);
    const socket = await connectSocket(bosun.url, token);
    const ended = new Promise<{ reason: string }>((resolve) => socket.once('session_ended', resolve));
    const disconnected = new Promise<string>((resolve) => socket.once('disconnect', resolve));

    expect(await ended).toMatchObject({ reason: 'expired' });
    expect(await disconnected).toBe('io server disconnect');
    const after = await me(token);
    expect([after.status, after.body.error.code, after.body.error.message]).toEqual([401, 'unauthorized', 'The token has expired: create a new one (bosun tokens create)']);
    await expect(connectSocket(bosun.url, token)).rejects.toMatchObject({ data: { code: 'unauthorized', message: 'The token has expired' } });
  });

  test('revoking a token refuses its next request and disconnects its sockets at once; other tokens are untouched', async () => {
    const { token } = await createToken({ org: 'lifecycle', name: 'to-revoke', scopes: ['read'] });
    const { token: other } = await createToken({ org: 'lifecycle', name: 'stays', scopes: ['read'] });
    const socket = await connectSocket(bosun.url, token);
    const bystander = await connectSocket(bosun.url, other);
    const ended = new Promise<{ reason: string }>((resolve) => socket.once('session_ended', resolve));
    const disconnected = new Promise<string>((resolve) => socket.once('disconnect', resolve));

    const revokedAt = Date.now();
    await revokeToken('lifecycle', 'to-revoke');
    expect((await me(token)).status).toBe(401);
    expect(await ended).toMatchObject({ reason: 'revoked' });
    expect(await disconnected).toBe('io server disconnect');
    // A change stream away: well under the 2 s a person would call "at once".
    expect(Date.now() - revokedAt).toBeLessThan(2000);
    expect(bystander.connected).toBe(true);
    expect((await me(other)).status).toBe(200);
    bystander.close();
  });

  test('the last use is recorded; a guessed token with a real prefix is refused like any other', async () => {
    const { token } = await createToken({ org: 'lifecycle', name: 'used', scopes: ['read'] });
    expect((await listTokens('lifecycle')).find((t) => t.name === 'used')!.last_used_at).toBeNull();
    await me(token);
    const used = await eventually(async () => (await listTokens('lifecycle')).find((t) => t.name === 'used')!.last_used_at, (at) => at !== null);
    expect(Date.now() - used!.getTime()).toBeLessThan(10_000);
    const guessed = token.slice(0, 10) + 'A'.repeat(token.length - 10);
    expect((await me(guessed)).body.error).toMatchObject({ code: 'unauthorized', message: 'The token is unknown or has been revoked' });
  });

  test('the CLI creates an expiring token, lists when it expires, and refuses a malformed duration', async () => {
    const env = externalServicesEnv('tokens-expiry');
    const created = await runCli(['tokens', 'create', '--org', 'acme', '--name', 'ci', '--expires-in', '90d'], env);
    expect(created.code).toBe(0);
    const listed = await runCli(['tokens', 'list', '--org', 'acme', '--json'], env);
    const [entry] = JSON.parse(listed.stdout) as Array<{ expires_at: string }>;
    const days = (Date.parse(entry!.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
    const bad = await runCli(['tokens', 'create', '--org', 'acme', '--name', 'ci2', '--expires-in', '5 years'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('Invalid duration "5 years"');
  });
});
