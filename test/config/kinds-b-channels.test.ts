import { loadNames } from '../../src/api/config/names';
import { channelSecret } from '../../src/domain/notifications/channels';
import { NotificationChannelModel } from '../../src/domain/notifications/model';
import { parseMasterKey, SecretBox } from '../../src/domain/secrets/secret-box';
import type { Principal } from '../../src/domain/tokens/service';
import { userWithToken, type User } from '../support/client';
import { adminOf, applyInTransaction, checkContext, connectTo, kindsB } from '../support/config-kinds';
import { eventually } from '../support/eventually';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * A notification channel kept in Git (issue 38): its url is `${secret:NAME}`, stored and shown as the
 * reference, and read from the organization's secret by the sender at each delivery; its signing
 * secret is generated when it is created and signs what it sends.
 */

type Json = any;

describe('config kind NotificationChannel', () => {
  let bosun: SharedBosun;
  let admin: User;
  let organizationId: string;
  let principal: Principal;
  let disconnect: () => Promise<void>;
  let receiver: WebhookReceiver;
  let deploymentId: string;

  const request = async (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: Json, status = 200) => {
    const res = await admin.request(method, path, body);
    if (res.status !== status) throw new Error(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = userWithToken(bosun, await bosun.token('channels'));
    disconnect = await connectTo(bosun.mongoUri);
    ({ organizationId, principal } = await adminOf(admin, bosun.org('channels')));
    deploymentId = (await request('post', '/deployments', { name: 'web-release', targets: { tags: ['web'] }, steps: [{ name: 'deploy', command: 'true' }] }, 201)).data.id;
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.stop();
    await disconnect();
    await bosun.stop();
  });

  test('its url is a secret reference, shown as written; the sender reads the secret at each delivery, signed with the secret made on create', async () => {
    const { channel } = kindsB(bosun);
    await request('put', '/secrets/OPS_HOOK', { value: receiver.url });
    const spec = { type: 'webhook', url: '${secret:OPS_HOOK}', events: ['run.failed', 'run.failed'], filter: { deployments: ['web-release'], tags: ['web', 'web'] } };
    const checked = await channel.check(spec, await checkContext(organizationId));
    const canonical = { type: 'webhook', url: '${secret:OPS_HOOK}', events: ['run.failed'], filter: { deployments: ['web-release'], tags: ['web'], only_final_failure: false } };
    expect(checked).toEqual({ spec: canonical, problems: [] });

    const [id] = await applyInTransaction(organizationId, principal, [{ adapter: channel, name: 'ops', spec: canonical }]);
    const view = (await request('get', `/notification-channels/${id}`)).data;
    expect(view).toMatchObject({ name: 'ops', type: 'webhook', url: '${secret:OPS_HOOK}', events: ['run.failed'], filter: { deployments: [deploymentId], tags: ['web'], only_final_failure: false }, enabled: true });
    expect(view).not.toHaveProperty('secret');
    const [current] = await channel.current(organizationId, await loadNames(organizationId));
    expect(current).toMatchObject({ id, name: 'ops', spec: canonical, managed_by: { source: 'platform-repo' } });
    expect(JSON.stringify((await channel.check(current!.spec, await checkContext(organizationId, current!))).spec)).toBe(JSON.stringify(canonical));

    // The receiver checks the signature with the secret made on create (sealed with the Bosun's key).
    const stored = await NotificationChannelModel.findById(id).lean().orFail();
    expect(stored.url_sealed).toBeNull();
    receiver.secret = channelSecret(stored, new SecretBox(parseMasterKey(bosun.secretKey)));
    await request('post', `/notification-channels/${id}/test`, undefined, 202);
    const [ping] = await eventually(async () => receiver.events('ping'), (pings) => pings.length === 1);
    expect(ping).toMatchObject({ path: '/hooks', verified: true });

    // The secret gone, a delivery fails saying which secret it needs, and nothing is sent.
    await request('delete', '/secrets/OPS_HOOK', undefined, 204);
    await request('post', `/notification-channels/${id}/test`, undefined, 202);
    const deliveries = await eventually(async () => (await request('get', `/notification-channels/${id}/deliveries`)).data as Json[], (found) => found.some((d) => d.status === 'failed'));
    expect(deliveries.find((d) => d.status === 'failed').reason).toBe('the channel\'s url is the secret "OPS_HOOK", which the organization does not have (PUT /api/v1/secrets/OPS_HOOK)');
    expect(receiver.events('ping')).toHaveLength(1);

    // Replaced (its secret kept), then removed.
    await applyInTransaction(organizationId, principal, [{ adapter: channel, name: 'ops', spec: { ...canonical, events: ['run.succeeded'] } }]);
    expect((await request('get', `/notification-channels/${id}`)).data.events).toEqual(['run.succeeded']);
    expect((await NotificationChannelModel.findById(id).lean().orFail()).secret_sealed).toBe(stored.secret_sealed);
    await applyInTransaction(organizationId, principal, [], [{ adapter: channel, id: id! }]);
    expect((await admin.request('get', `/notification-channels/${id}`)).status).toBe(404);
  });
});
