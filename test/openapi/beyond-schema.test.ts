import { bearer, startBosun, type Bosun } from '../support/bosun';
import { responseChecker } from '../support/openapi';
import { documentResolver, documentValidator, type Json } from '../support/schema-probes';

/**
 * A request the document's schema allows but the route refuses, for a rule no schema can state: the
 * 422 is documented, and its description names the rule a client broke.
 */
describe('what the routes refuse beyond the schema is in the document', () => {
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

  /** Sends a body the document's schema accepts; expects the documented 422 naming `field`, and its description naming the rule. */
  async function refusedBeyondSchema(path: string, body: object, field: string, rule: string) {
    const operation = doc.paths[path].post;
    const schema = documentResolver(doc)(operation.requestBody.content['application/json'].schema);
    expect(documentValidator(doc)(schema, body)).toBe(true);
    const res = await bosun.api.post(path).set(bearer(admin)).send(body);
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
});
