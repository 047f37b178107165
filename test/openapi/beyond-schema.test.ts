import { bearer, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';
import { agentAccount } from '../support/mcp';
import { responseChecker } from '../support/openapi';
import { documentResolver, documentValidator, type Json } from '../support/schema-probes';

/** One API (no worker) and its document for both ways of holding the routes to the document. */
let bosun: Bosun;
let admin: string;
let doc: Json;
let expectDocumented: ReturnType<typeof responseChecker>;

beforeAll(async () => {
  bosun = await startBosun({ worker: false });
  admin = await bosun.token('openapi-beyond-schema');
  doc = (await bosun.api.get('/api/v1/openapi.json')).body;
  expectDocumented = responseChecker(doc as never);
});
afterAll(() => bosun.stop());

/**
 * A request the document's schema allows but the route refuses, for a rule no schema can state: the
 * 422 is documented, and its description names the rule a client broke.
 */
describe('what the routes refuse beyond the schema is in the document', () => {
  /** Sends a body the document's schema accepts; expects the documented 422 naming `field`, and its description naming the rule. */
  async function refusedBeyondSchema(path: string, body: object, field: string, rule: string, method: 'post' | 'patch' = 'post', template = path) {
    const operation = doc.paths[template][method];
    const schema = documentResolver(doc)(operation.requestBody.content['application/json'].schema);
    expect(documentValidator(doc)(schema, body)).toBe(true);
    const res = await bosun.api[method](path).set(bearer(admin)).send(body);
    expectDocumented(res);
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(operation.responses['422'].description).toContain(rule);
  }

  test('POST /servers: a private key no SSH library can read', async () => {
    await refusedBeyondSchema(
      '/api/v1/servers',
      { title: 'unreadable', host: 'example.com', username: 'deploy', auth_method: 'private_key', private_key: 'not a key' },
      'private_key',
      '`private_key` must be a key OpenSSH or PEM can read',
    );
  });

  test('POST /migration-plans: the same server as source and target', async () => {
    const added = await bosun.api.post('/api/v1/servers').set(bearer(admin)).send({ title: 'source', host: '127.0.0.1', port: 1, username: 'deploy', auth_method: 'password', password: 'pw-secret' });
    const serverId = added.body.data.id as string;
    await refusedBeyondSchema(
      '/api/v1/migration-plans',
      { title: 'nowhere', source_server_id: serverId, target_server_id: serverId },
      'target_server_id',
      'two different servers',
    );
  });

  test('POST /notification-channels: a URL resolving to a cloud metadata address', async () => {
    await refusedBeyondSchema(
      '/api/v1/notification-channels',
      { name: 'metadata', type: 'webhook', url: 'http://169.254.169.254/latest', events: ['run.failed'] },
      'url',
      'never link-local or cloud metadata',
    );
  });

  test('PATCH /servers/{id}: jump hosts that are no servers of the organization', async () => {
    const added = await bosun.api.post('/api/v1/servers').set(bearer(admin)).send({ title: 'routed', host: '127.0.0.1', port: 2, username: 'deploy', auth_method: 'password', password: 'pw-secret' });
    expect(added.status).toBe(201);
    await refusedBeyondSchema(`/api/v1/servers/${added.body.data.id}`, { via: ['000000000000000000000000'] }, 'via', 'not one of your organization’s', 'patch', '/api/v1/servers/{id}');
  });

  test('POST /conversations: commands for a conversation about a migration plan', async () => {
    await refusedBeyondSchema(
      '/api/v1/conversations',
      { chatable_type: 'migration_plan', chatable_id: '000000000000000000000000', message: 'why', commands: ['uptime'] },
      'commands',
      '`commands` with a `chatable_type` other than `server`',
    );
  });
});

/** The other way round: what the document refuses, the route refuses; what it answers, the document says (each found by `npm run fuzz`). */
describe('what the document says of a request, the route does', () => {
  test('a list of people, teams, service accounts or role bindings refuses a bad query with its documented 422', async () => {
    for (const path of ['/api/v1/people?per_page=101', '/api/v1/teams?per_page=101', '/api/v1/service-accounts?per_page=101', '/api/v1/role-bindings?subject_type=robot']) {
      const res = await bosun.api.get(path).set(bearer(admin));
      expect([path, res.status]).toEqual([path, 422]);
      expectDocumented(res);
    }
  });

  test('an email address with more than 64 characters before its @ is no email address (RFC 5321), on create and on update', async () => {
    const long = `${'a'.repeat(65)}@example.com`;
    const created = await bosun.api.post('/api/v1/people').set(bearer(admin)).send({ name: 'Long Mail', email: long });
    expect([created.status, created.body.error?.details?.[0]?.path]).toEqual([422, 'email']);
    expectDocumented(created);
    const fine = await bosun.api.post('/api/v1/people').set(bearer(admin)).send({ name: 'Short Mail', email: `${'a'.repeat(64)}@example.com` });
    expect(fine.status).toBe(201);
    const updated = await bosun.api.patch(`/api/v1/people/${fine.body.data.id}`).set(bearer(admin)).send({ email: long });
    expect(updated.status).toBe(422);
    expect((await bosun.api.get(`/api/v1/people/${fine.body.data.id}`).set(bearer(admin))).body.data.email).toBe(`${'a'.repeat(64)}@example.com`);
  });

  test('PATCH of a notification channel without a field changes nothing: 422', async () => {
    const channel = await bosun.api.post('/api/v1/notification-channels').set(bearer(admin)).send({ name: 'ops', type: 'webhook', url: 'http://127.0.0.1:9/bosun', events: ['run.failed'] });
    expect(channel.status).toBe(201);
    for (const res of [
      await bosun.api.patch(`/api/v1/notification-channels/${channel.body.data.id}`).set(bearer(admin)),
      await bosun.api.patch(`/api/v1/notification-channels/${channel.body.data.id}`).set(bearer(admin)).send({}),
    ]) {
      expect([res.status, res.body.error?.code]).toEqual([422, 'validation_failed']);
      expectDocumented(res);
    }
    const after = await bosun.api.get(`/api/v1/notification-channels/${channel.body.data.id}`).set(bearer(admin));
    expect(after.body.data.updated_at).toBe(channel.body.data.updated_at);
  });

  test('a literal path is never taken for an id: any other method on /servers/import is a 405 naming POST', async () => {
    for (const method of ['get', 'patch', 'delete'] as const) {
      const res = await bosun.api[method]('/api/v1/servers/import').set(bearer(admin)).send(method === 'get' ? undefined : { title: 'x' });
      expect([method, res.status, res.headers.allow, res.body.error?.code]).toEqual([method, 405, 'POST', 'method_not_allowed']);
    }
    const options = await bosun.api.options('/api/v1/servers/import').set(bearer(admin));
    expect([options.status, options.headers.allow]).toEqual([200, 'POST']);
    expect((await bosun.api.options('/api/v1/servers/000000000000000000000000').set(bearer(admin))).headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    // The routes beside it still answer as before.
    expect((await bosun.api.get('/api/v1/servers/000000000000000000000000').set(bearer(admin))).status).toBe(404);
  });

  test('POST /mcp takes a JSON-RPC message and nothing more: an unknown field is a 422 before the SDK; the transport’s own 400 is documented', async () => {
    const account = await agentAccount(userWithToken(bosun, admin), 'door-fuzz');
    const mcp = (body: object) => bosun.api.post('/mcp').set(bearer(account.token)).set('Accept', 'application/json, text/event-stream').send(body);
    const extra = await mcp({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: {}, extra: {} });
    expect([extra.status, extra.body.error?.code, extra.body.error?.details?.[0]?.message]).toEqual([422, 'validation_failed', expect.stringContaining('with no other field')]);
    expectDocumented(extra);
    const listed = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(listed.status).toBe(200);
    expectDocumented(listed);
    const badVersion = await bosun.api
      .post('/mcp')
      .set(bearer(account.token))
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '1999-01-01')
      .send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    expect(badVersion.status).toBe(400);
    expect(badVersion.body.error.code).toBe(-32000);
    expectDocumented(badVersion);
  });
});
