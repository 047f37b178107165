import { bearer, startBosun, type Bosun } from '../support/bosun';

describe('GET /api/v1/servers: pagination and tenant isolation', () => {
  let bosun: Bosun;
  let acme: string;
  let globex: string;
  const acmeIds: string[] = [];

  beforeAll(async () => {
    // Unreachable ports and one attempt: these servers only need to exist.
    bosun = await startBosun({ verifyMaxAttempts: 1 });
    acme = await bosun.token('acme-pages');
    globex = await bosun.token('globex-pages');
    for (let i = 1; i <= 25; i += 1) {
      const res = await bosun.api.post('/api/v1/servers').set(bearer(acme)).send({
        title: `acme-${i}`, host: '127.0.0.1', port: i, username: 'deploy', auth_method: 'password', password: 'secret-pw',
      });
      expect(res.status).toBe(201);
      acmeIds.push(res.body.data.id);
    }
    await bosun.api.post('/api/v1/servers').set(bearer(globex)).send({
      title: 'globex-1', host: '127.0.0.1', port: 1, username: 'deploy', auth_method: 'password', password: 'secret-pw',
    });
  });
  afterAll(() => bosun.stop());

  const list = (query: string, token = acme) => bosun.api.get(`/api/v1/servers${query}`).set(bearer(token));

  test('12 per page by default, newest first, with meta', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 12, total: 25, last_page: 3 });
    expect(res.body.data).toHaveLength(12);
    expect(res.body.data[0].title).toBe('acme-25');
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      ['auth_method', 'created_at', 'freezes', 'host', 'id', 'last_error', 'port', 'status', 'tags', 'title', 'username', 'via'].sort(),
    );
    expect(JSON.stringify(res.body)).not.toContain('secret-pw');
  });

  test('the last page holds the remainder; past it, an empty page', async () => {
    expect((await list('?page=3')).body.data.map((s: { title: string }) => s.title)).toEqual(['acme-1']);
    const beyond = await list('?page=9');
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toMatchObject({ current_page: 9, last_page: 3, total: 25 });
  });

  test('pages do not overlap and cover every server', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 3; page += 1) seen.push(...(await list(`?page=${page}&per_page=10`)).body.data.map((s: { id: string }) => s.id));
    expect(seen.sort()).toEqual([...acmeIds].sort());
  });

  test('per_page goes up to 100', async () => {
    const res = await list('?per_page=100');
    expect(res.body.data).toHaveLength(25);
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 100, total: 25, last_page: 1 });
  });

  test.each(['?per_page=101', '?per_page=0', '?page=0', '?page=-1', '?page=abc', '?per_page=1.5', '?page=1&page=2'])(
    '%s is 422',
    async (query) => {
      const res = await list(query);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
    },
  );

  test('another organization sees only its own servers', async () => {
    const res = await list('', globex);
    expect(res.body.meta.total).toBe(1);
    expect(res.body.data[0].title).toBe('globex-1');
  });

  test('another organization’s server answers 404 on every route, and is left untouched', async () => {
    const id = acmeIds[0]!;
    const as = (token: string) => bearer(token);
    expect((await bosun.api.get(`/api/v1/servers/${id}`).set(as(globex))).status).toBe(404);
    expect((await bosun.api.post(`/api/v1/servers/${id}/verify`).set(as(globex))).status).toBe(404);
    expect((await bosun.api.delete(`/api/v1/servers/${id}`).set(as(globex))).status).toBe(404);
    const still = await bosun.api.get(`/api/v1/servers/${id}`).set(as(acme));
    expect(still.status).toBe(200);
    expect(still.body.data.id).toBe(id);
  });
});
