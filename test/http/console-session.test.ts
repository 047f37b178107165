import { io } from 'socket.io-client';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { createToken, revokeToken } from '../../src/domain/tokens/service';
import type { BosunSocket } from '../support/socket';

/**
 * The console signs in by exchanging an API token for a session cookie: HttpOnly and SameSite=Strict,
 * writes guarded by an anti-forgery header, ended by sign-out, idleness, its absolute end and its
 * token's revocation — over HTTP and on the page's socket.
 */
const IDLE_SECONDS = 3;

describe('console sessions', () => {
  let bosun: Bosun;
  beforeAll(async () => {
    bosun = await startBosun({ sessionIdleSeconds: IDLE_SECONDS, sessionMaxSeconds: 6 });
  });
  afterAll(() => bosun.stop());

  const signIn = (token: string) => bosun.api.post('/api/v1/session').send({ token });
  const cookieOf = (response: { headers: Record<string, unknown> }) => String((response.headers['set-cookie'] as string[])[0]).split(';')[0]!;
  const servers = (cookie: string) => bosun.api.get('/api/v1/servers').set('Cookie', cookie);
  const addServer = (cookie: string, csrf?: string) => {
    const request = bosun.api.post('/api/v1/servers').set('Cookie', cookie);
    if (csrf) request.set('X-CSRF-Token', csrf);
    return request.send({ title: 'from-console', host: '127.0.0.1', port: 1, username: 'u', auth_method: 'password', password: 'p' });
  };
  const pageSocket = (cookie: string): Promise<BosunSocket> =>
    new Promise((resolve, reject) => {
      const socket: BosunSocket = io(bosun.url, { transports: ['websocket'], reconnection: false, extraHeaders: { cookie } });
      socket.once('connect', () => resolve(socket));
      socket.once('connect_error', (error) => {
        socket.close();
        reject(error);
      });
    });

  test('signing in sets an HttpOnly, SameSite=Strict cookie (not Secure over plain HTTP) and answers the scopes and the anti-forgery token, never the API token', async () => {
    const { token } = await createToken({ org: 'console-a', name: 'viewer', scopes: ['read', 'deployments:run'] });
    const signedIn = await signIn(token);
    expect(signedIn.status).toBe(201);
    const setCookie = (signedIn.headers['set-cookie'] as unknown as string[])[0]!;
    expect(setCookie).toMatch(/^bosun_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).not.toMatch(/Secure/);
    expect(signedIn.body.data).toMatchObject({ organization: 'console-a', token_name: 'viewer', scopes: ['read', 'deployments:run'], idle_seconds: 3 });
    expect(signedIn.body.data.csrf_token).toEqual(expect.any(String));
    expect(JSON.stringify(signedIn.body)).not.toContain(token);
    expect(setCookie).not.toContain(token);
    // A reloaded page asks for the same anti-forgery token.
    const session = await bosun.api.get('/api/v1/session').set('Cookie', cookieOf(signedIn));
    expect(session.body.data.csrf_token).toBe(signedIn.body.data.csrf_token);
    // The session acts with its token's scopes.
    expect((await servers(cookieOf(signedIn))).status).toBe(200);
    const refused = await addServer(cookieOf(signedIn), signedIn.body.data.csrf_token);
    expect([refused.status, refused.body.error.message]).toEqual([403, 'This token lacks the "servers:write" scope']);
  });

  test('a bad token or body is refused with the usual envelope and sets no cookie', async () => {
    const unknown = await signIn('bsn_notatokennotatokennotatokennotatoken');
    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'unauthorized']);
    expect(unknown.headers['set-cookie']).toBeUndefined();
    const malformed = await bosun.api.post('/api/v1/session').send({ token: 'x', extra: 1 });
    expect([malformed.status, malformed.body.error.code]).toEqual([422, 'validation_failed']);
    const noSession = await bosun.api.get('/api/v1/session').set('Cookie', 'bosun_session=madeup');
    expect([noSession.status, noSession.body.error.code]).toEqual([401, 'unauthorized']);
  });

  test('a write without the anti-forgery header is refused and changes nothing; with it, it goes through', async () => {
    const { token } = await createToken({ org: 'console-b', name: 'admin', scopes: ['admin'] });
    const signedIn = await signIn(token);
    const cookie = cookieOf(signedIn);
    const forged = await addServer(cookie);
    expect([forged.status, forged.body.error.code]).toEqual([403, 'forbidden']);
    const wrong = await addServer(cookie, 'not-the-token');
    expect(wrong.status).toBe(403);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).body.data).toEqual([]);
    expect((await addServer(cookie, signedIn.body.data.csrf_token)).status).toBe(201);
  });

  test('signing out ends the session for HTTP and disconnects its page’s socket', async () => {
    const { token } = await createToken({ org: 'console-c', name: 'admin', scopes: ['admin'] });
    const signedIn = await signIn(token);
    const cookie = cookieOf(signedIn);
    const socket = await pageSocket(cookie);
    const ended = new Promise<{ reason: string }>((resolve) => socket.once('session_ended', resolve));
    // Signing out is a write: a forged sign-out is refused.
    expect((await bosun.api.delete('/api/v1/session').set('Cookie', cookie)).status).toBe(403);
    const out = await bosun.api.delete('/api/v1/session').set('Cookie', cookie).set('X-CSRF-Token', signedIn.body.data.csrf_token);
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^bosun_session=;.*Expires=Thu, 01 Jan 1970/);
    expect(await ended).toMatchObject({ reason: 'signed_out' });
    expect((await servers(cookie)).body.error.message).toBe('The console session has ended (signed out, or idle too long): sign in again');
    await expect(pageSocket(cookie)).rejects.toMatchObject({ message: 'unauthorized' });
    // The token itself still works.
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
  });

  test('revoking the token ends its sessions at once, HTTP and sockets', async () => {
    const { token } = await createToken({ org: 'console-d', name: 'doomed', scopes: ['read'] });
    const cookie = cookieOf(await signIn(token));
    const socket = await pageSocket(cookie);
    const ended = new Promise<{ reason: string }>((resolve) => socket.once('session_ended', resolve));
    await revokeToken('console-d', 'doomed');
    expect(await ended).toMatchObject({ reason: 'revoked' });
    expect((await servers(cookie)).body.error.message).toBe("The session's token has been revoked: sign in with another");
  });

  test('a session ends after its idle time without requests, and at its absolute end however busy', async () => {
    const { token } = await createToken({ org: 'console-e', name: 'idle', scopes: ['read'] });
    const idle = cookieOf(await signIn(token));
    // The idle session's page socket is told it expired (not that someone signed out).
    const idleSocket = await pageSocket(idle);
    const idleEnded = new Promise<{ reason: string; message: string }>((resolve) => idleSocket.once('session_ended', resolve));
    // The idle session's last request (the socket's handshake) is behind us: from now on it is idle.
    const idleSince = Date.now();
    const busySignIn = await signIn(token);
    const busy = cookieOf(busySignIn);
    const busyEnd = Date.parse(busySignIn.body.data.expires_at);
    // Busy: requests all along keep it alive past the other's idle time. Time passing is what is tested, so the wait is for the clock.
    await eventually(async () => {
      expect((await servers(busy)).status).toBe(200);
      return Date.now();
    }, (now) => now >= idleSince + IDLE_SECONDS * 1000);
    // ...while the idle one has ended.
    expect((await servers(idle)).status).toBe(401);
    expect(await idleEnded).toEqual({ reason: 'expired', message: 'The console session expired' });
    // Still busy, it ends at its absolute end, and not before.
    const ended = await eventually(async () => ({ status: (await servers(busy)).status, answeredAt: Date.now() }), (r) => r.status === 401, 30_000);
    expect(ended.answeredAt).toBeGreaterThanOrEqual(busyEnd);
  });
});
