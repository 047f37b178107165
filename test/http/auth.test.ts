import { revokeToken } from '../../src/domain/tokens/service';
import { bearer, startBosun, type Bosun } from '../support/bosun';

describe('authentication and scopes on /api/v1', () => {
  let bosun: Bosun;
  beforeAll(async () => {
    bosun = await startBosun();
  });
  afterAll(() => bosun.stop());

  const expectEnvelope = (res: { status: number; body: unknown }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };

  test('a request without Authorization is 401', async () => {
    expectEnvelope(await bosun.api.get('/api/v1/servers'), 401, 'unauthorized');
  });

  test.each([
    ['a non-Bearer scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer with no token', 'Bearer '],
    ['a token with spaces', 'Bearer two words'],
  ])('a malformed header (%s) is 401', async (_what, header) => {
    expectEnvelope(await bosun.api.get('/api/v1/servers').set('Authorization', header), 401, 'unauthorized');
  });

  test('an unknown token is 401', async () => {
    expectEnvelope(await bosun.api.get('/api/v1/servers').set(bearer('bsn_notarealtokenatallnotarealtokenatall')), 401, 'unauthorized');
  });

  test('a revoked token is 401 at once', async () => {
    const token = await bosun.token('revokers', ['read'], 'soon-gone');
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    await revokeToken('revokers', 'soon-gone');
    expectEnvelope(await bosun.api.get('/api/v1/servers').set(bearer(token)), 401, 'unauthorized');
  });

  test('a read-only token may list but not add or delete servers (403)', async () => {
    const token = await bosun.token('readers', ['read']);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    const post = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({});
    expectEnvelope(post, 403, 'forbidden');
    expect(post.body.error.message).toContain('servers:write');
    expectEnvelope(await bosun.api.delete('/api/v1/servers/000000000000000000000000').set(bearer(token)), 403, 'forbidden');
  });

  test('a servers:write token without read cannot list (403)', async () => {
    const token = await bosun.token('writers', ['servers:write']);
    expectEnvelope(await bosun.api.get('/api/v1/servers').set(bearer(token)), 403, 'forbidden');
  });

  test.each(['deployments:run', 'conversations:write'] as const)('a %s token cannot touch servers (403)', async (scope) => {
    const token = await bosun.token('others', [scope]);
    expectEnvelope(await bosun.api.get('/api/v1/servers').set(bearer(token)), 403, 'forbidden');
    expectEnvelope(await bosun.api.post('/api/v1/servers').set(bearer(token)).send({}), 403, 'forbidden');
  });

  test('an admin token holds every scope', async () => {
    const token = await bosun.token('admins', ['admin']);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    expectEnvelope(await bosun.api.post('/api/v1/servers').set(bearer(token)).send({}), 422, 'validation_failed');
  });

  test('the token records when it was last used', async () => {
    const token = await bosun.token('users', ['read'], 'tracked');
    const { listTokens } = await import('../../src/domain/tokens/service');
    expect((await listTokens('users'))[0]!.last_used_at).toBeNull();
    await bosun.api.get('/api/v1/servers').set(bearer(token));
    expect((await listTokens('users'))[0]!.last_used_at).toBeInstanceOf(Date);
  });
});

describe('rate limiting', () => {
  let bosun: Bosun;
  // A Bosun per test: its limits count a minute of requests, and one test's must not spend the other's.
  beforeEach(async () => {
    bosun = await startBosun({ rateLimitPerMinute: 5 });
  });
  afterEach(() => bosun.stop());

  test('past the limit a token gets 429 with Retry-After, other tokens are unaffected', async () => {
    const busy = await bosun.token('busy', ['read']);
    const calm = await bosun.token('calm', ['read']);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await bosun.api.get('/api/v1/servers').set(bearer(busy))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await bosun.api.get('/api/v1/servers').set(bearer(busy));
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await bosun.api.get('/api/v1/servers').set(bearer(calm))).status).toBe(200);
  });

  test('guessing tokens is limited per address, whatever token each guess carries', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      statuses.push((await bosun.api.get('/api/v1/servers').set(bearer(`bsn_guess${i}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`))).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});
