import { bearer, startBosun, type Bosun } from '../support/bosun';

describe('one JSON error envelope for every failure', () => {
  let bosun: Bosun;
  let token: string;
  beforeAll(async () => {
    bosun = await startBosun({ bodyLimitBytes: 64 * 1024 });
    token = await bosun.token('errors');
  });
  afterAll(() => bosun.stop());

  const post = (body: string, type = 'application/json') =>
    bosun.api.post('/api/v1/servers').set(bearer(token)).set('Content-Type', type).send(body);

  test('malformed JSON is 400 malformed_json', async () => {
    const res = await post('{"title": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('malformed_json');
  });

  test('a body that is not JSON is 415', async () => {
    const res = await post('title=x', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  test('a body over the limit is 413', async () => {
    const res = await post(JSON.stringify({ title: 'x'.repeat(70 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('validation failures are 422 with a detail per field, and unknown fields are rejected', async () => {
    const res = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: '', host: 'not a host!', port: 70000, username: 'deploy', auth_method: 'private_key', private_key: 'k', colour: 'red',
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['colour', 'host', 'port', 'title']));
  });

  test('an unknown auth_method is named in the details', async () => {
    const res = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title: 't', host: 'h', port: 22, username: 'u', auth_method: 'kerberos' });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ path: 'auth_method', message: expect.stringContaining('private_key') }]);
  });

  test('a private key that is not a key is 422, and nothing is stored', async () => {
    const servers = async () => (await bosun.api.get('/api/v1/servers').set(bearer(token))).body.meta.total;
    const before = await servers();
    const res = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 't', host: 'example.com', port: 22, username: 'u', auth_method: 'private_key', private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\nnope\n-----END OPENSSH PRIVATE KEY-----',
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].path).toBe('private_key');
    expect(await servers()).toBe(before);
  });

  test('adding the same login on the same host twice is 409', async () => {
    const body = { title: 'a', host: '127.0.0.1', port: 1, username: 'twice', auth_method: 'password', password: 'p' };
    expect((await bosun.api.post('/api/v1/servers').set(bearer(token)).send(body)).status).toBe(201);
    const again = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ ...body, title: 'b' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
  });

  test('unknown routes and unknown or malformed ids are 404', async () => {
    for (const path of ['/api/v1/nothing-here', '/api/v1/servers/000000000000000000000000', '/api/v1/servers/not-an-id']) {
      const res = await bosun.api.get(path).set(bearer(token));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  test('every response carries a request id, echoed when the client sends one', async () => {
    const res = await bosun.api.get('/api/v1/servers').set(bearer(token)).set('X-Request-Id', 'ci-job-42');
    expect(res.headers['x-request-id']).toBe('ci-job-42');
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
