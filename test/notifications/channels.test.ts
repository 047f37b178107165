import { MongoClient, ObjectId } from 'mongodb';
import { eventually } from '../support/eventually';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { TEST_NOTIFICATION_RETRY_SECONDS } from '../support/shared';
import { notificationDeliveryWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { userWithToken, type User } from '../support/client';
import { parseMetrics, valueOf } from '../support/metrics';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * Notification channels as an administrator uses them: added (every bad input refused, nothing
 * stored), told of runs with signed webhooks a receiver verifies, retried with the same webhook-id,
 * disabled by a 410, redelivered, pinged; their deliveries listed; counted in /metrics.
 */

type Json = any;

describe('notification channels', () => {
  let bosun: SharedBosun;
  let admin: User;
  let server: string;
  let receiver: WebhookReceiver;

  const channels = (path = '', method: 'get' | 'post' | 'patch' | 'delete' = 'get', body?: Json) => admin.request(method, `/notification-channels${path}`, body);
  const addChannel = async (body: Json) => {
    const res = await channels('', 'post', body);
    if (res.status !== 201) throw new Error(`add a channel: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const deliveries = async (channel: string, query = '') => (await channels(`/${channel}/deliveries${query}`)).body.data as Json[];

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = userWithToken(bosun, await bosun.token('acme'));
    server = await admin.addServer({ host: '127.0.0.1', tags: ['web'] });
  }, 120_000);
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.stop());
  afterAll(() => bosun.stop());

  test('a channel is added with its secret shown once; every bad input is refused with 422 naming the field, and nothing is stored', async () => {
    const created = await addChannel({ name: 'ops hooks', type: 'webhook', url: receiver.url, events: ['run.failed', 'run.succeeded'] });
    expect(created).toMatchObject({ name: 'ops hooks', type: 'webhook', url: receiver.url, events: ['run.failed', 'run.succeeded'], enabled: true, filter: { deployments: null, tags: null, only_final_failure: false } });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const read = (await channels(`/${created.id}`)).body.data;
    expect(read).not.toHaveProperty('secret');
    expect(JSON.stringify((await channels()).body)).not.toContain(created.secret);

    const good = { name: 'another', type: 'webhook', url: receiver.url, events: ['run.failed'] };
    const refusals: Array<[Json, string]> = [
      [{ ...good, url: 'ftp://127.0.0.1/hooks' }, 'url'],
      [{ ...good, url: 'file:///etc/passwd' }, 'url'],
      [{ ...good, url: 'not a url' }, 'url'],
      [{ ...good, url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
      [{ ...good, url: 'http://[fe80::1]/hooks' }, 'url'],
      [{ ...good, url: 'http://[fd00:ec2::254]/hooks' }, 'url'],
      [{ ...good, url: 'http://[::ffff:169.254.169.254]/hooks' }, 'url'],
      [{ ...good, url: 'http://bosun-test-nowhere.invalid/hooks' }, 'url'],
      [{ ...good, type: 'email' }, 'type'],
      [{ ...good, events: [] }, 'events'],
      [{ ...good, events: ['run.exploded'] }, 'events.0'],
      [{ ...good, name: '' }, 'name'],
      [{ ...good, filter: { deployments: ['0123456789abcdef01234567'] } }, 'filter.deployments'],
      [{ ...good, filter: { deployments: ['nope'] } }, 'filter.deployments.0'],
      [{ ...good, filter: { only_final_failure: 'yes' } }, 'filter.only_final_failure'],
      [{ ...good, filter: { colour: 'red' } }, 'filter'],
      [{ ...good, secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [body, field] of refusals) {
      const res = await channels('', 'post', body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), 422, 'validation_failed']);
      expect(res.body.error.details.map((d: Json) => d.path)).toContain(field);
    }
    expect((await channels('', 'post', { ...good, name: 'ops hooks' })).status).toBe(409);
    expect((await channels()).body.data.map((c: Json) => c.name)).toEqual(['ops hooks']);

    // The organization may refuse loopback and private receivers; they are allowed by default.
    expect((await admin.request('put', '/notification-settings', { refuse_private_addresses: true })).body.data).toEqual({ refuse_private_addresses: true });
    const refused = await channels('', 'post', good);
    expect([refused.status, refused.body.error.details[0].path]).toEqual([422, 'url']);
    expect((await channels(`/${created.id}`, 'patch', { url: 'http://10.1.2.3/hooks' })).status).toBe(422);
    await admin.request('put', '/notification-settings', { refuse_private_addresses: false });

    const changed = (await channels(`/${created.id}`, 'patch', { events: ['run.cancelled'], filter: { tags: ['web'] } })).body.data;
    expect(changed).toMatchObject({ events: ['run.cancelled'], filter: { tags: ['web'], deployments: null } });
    expect((await channels(`/${created.id}`, 'delete')).status).toBe(204);
    expect((await channels(`/${created.id}`)).status).toBe(404);
  });

  test('a run’s end reaches the receiver signed per Standard Webhooks, with the run, its deployment, actor, summary and console link; a failure with its step’s last 20 redacted lines', async () => {
    await admin.request('put', '/secrets/deploy_token', { value: 'sup3r-s3cret-value' });
    const channel = await addChannel({ name: `runs-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded', 'run.failed'] });
    receiver.secret = channel.secret;
    const ok = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }], 'notify-ok');
    const run = await admin.runToEnd(ok.id);
    const [message] = await eventually(async () => receiver.events('run.succeeded'), (r) => r.length >= 1);
    expect(message!.verified).toBe(true);
    expect(message!.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(message!.json).toMatchObject({
      type: 'run.succeeded',
      organization: { slug: bosun.org('acme') },
      run: { id: run.id, status: 'success', error: null, actor: { name: expect.any(String) } },
      deployment: { id: ok.id, name: 'notify-ok' },
      summary: 'Run of notify-ok succeeded',
      console_url: `${bosun.url}/deployments/${ok.id}/runs/${run.id}`,
    });

    const lines = Array.from({ length: 30 }, (_, i) => `echo line-${i + 1}`).join('; ');
    const bad = await admin.defineDeployment(server, [{ name: 'breaks', command: `${lines}; echo "token is sup3r-s3cret-value"; exit 3` }], 'notify-bad');
    const failedRun = await admin.runToEnd(bad.id);
    expect(failedRun.status).toBe('failed');
    const [failure] = await eventually(async () => receiver.events('run.failed'), (r) => r.length >= 1);
    expect(failure!.verified).toBe(true);
    const step = failure!.json.run.failed_step;
    expect(step).toMatchObject({ index: 1, name: 'breaks' });
    const tail = step.last_lines.split('\n');
    expect(tail).toHaveLength(20);
    expect(tail[0]).toBe('line-12');
    expect(failure!.body).not.toContain('sup3r-s3cret-value');
    expect(failure!.json.summary).toContain('Run of notify-bad failed');
  });

  test('a fleet run waiting at its gate is told to a webhook and to slack (Block Kit, a button to the console’s run page), then its cancel, in order; a channel filtered to another deployment hears nothing', async () => {
    await admin.addServer({ host: '127.0.0.2', tags: ['web'] });
    const fleet = await admin.define({ name: 'notify-fleet', targets: { tags: ['web'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 1, expires_in: '2h' }] }, steps: [{ name: 'hello', command: 'echo hello' }] });
    const other = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }], 'notify-other');
    const slack = await startReceiver();
    try {
      const webhook = await addChannel({ name: `gates-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.awaiting_approval', 'run.cancelled'], filter: { deployments: [fleet.id] } });
      receiver.secret = webhook.secret;
      const slackChannel = await addChannel({ name: `slack-${Date.now()}`, type: 'slack', url: `${slack.url}/T000/B000/XXXXXXXX`, events: ['run.awaiting_approval'] });
      expect(slackChannel.url).toBe(`${slack.url}/T000/B000/********`);
      const elsewhere = await addChannel({ name: `elsewhere-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.awaiting_approval', 'run.cancelled'], filter: { deployments: [other.id] } });

      const { run_id: runId } = await admin.trigger(fleet.id);
      await admin.waitForRun(fleet.id, runId, (r) => r.status === 'awaiting_approval');
      const [asked] = await eventually(async () => receiver.events('run.awaiting_approval'), (r) => r.length === 1);
      expect(asked!.verified).toBe(true);
      expect(asked!.json).toMatchObject({ run: { id: runId, gate: { before_batch: 2, approvals_required: 1 } }, deployment: { name: 'notify-fleet' }, console_url: `${bosun.url}/deployments/${fleet.id}/runs/${runId}#gate` });
      const [message] = await eventually(async () => slack.received, (r) => r.length === 1);
      expect(message!.json.text).toBe('Run of notify-fleet is waiting for approval');
      // Posted to the whole URL, which is stored sealed: its token is nowhere in the database in clear.
      expect(message!.path).toBe('/hooks/T000/B000/XXXXXXXX');
      const db = await MongoClient.connect(bosun.mongoUri);
      try {
        const stored = await db.db().collection('notification_channels').findOne({ _id: new ObjectId(slackChannel.id as string) });
        expect(stored).toMatchObject({ url: `${slack.url}/T000/B000/********`, url_sealed: expect.any(String) });
        expect(JSON.stringify(stored)).not.toContain('XXXXXXXX');
      } finally {
        await db.close();
      }
      expect(message!.json.blocks.at(-1)).toEqual({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Review and approve' }, url: `${bosun.url}/deployments/${fleet.id}/runs/${runId}#gate`, style: 'primary' }] });

      // Cancelled at its gate: told after the gate.
      await admin.cancelRun(fleet.id, runId);
      await eventually(async () => receiver.events('run.cancelled').filter((r) => r.json.run.id === runId), (r) => r.length === 1);
      const types = receiver.received.filter((r) => r.json.run?.id === runId).map((r) => r.json.type);
      expect(types).toEqual(['run.awaiting_approval', 'run.cancelled']);
      expect(await deliveries(elsewhere.id)).toEqual([]);
    } finally {
      await slack.stop();
    }
  }, 90_000);

  test('a receiver that errors is retried with the same webhook-id until it answers; the deliveries list each attempt; metrics count them', async () => {
    let errors = 2;
    receiver.answer = () => (errors-- > 0 ? { status: 503, body: 'x'.repeat(70 * 1024) } : { status: 200, body: 'thanks' });
    const channel = await addChannel({ name: `retry-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    receiver.secret = channel.secret;
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }]);
    const run = await admin.runToEnd(deployment.id);
    const [delivery] = await eventually(() => deliveries(channel.id), (d) => d[0]?.status === 'delivered', 90_000);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set([delivery.webhook_id]));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(delivery.attempts.map((a: Json) => a.response_code)).toEqual([503, 503, 200]);
    expect(delivery.attempts[0].response_body).toBe('x'.repeat(200));
    expect(delivery).toMatchObject({ attempt_count: 3, next_attempt_at: null, event: { type: 'run.succeeded' } });
    // Retried after NOTIFICATION_RETRY_SECONDS (the tests' Bosuns: 1 s; 5 by default), doubling: the first attempt is the
    // dispatcher's; the run's workflow of notifications to this channel goes on after it — that wait, then a retry policy
    // doubling from there, as its history says — and the attempts are that far apart at least.
    const { events } = await bosun.temporal.workflow.getHandle(notificationDeliveryWorkflowId(channel.id, { kind: 'run', id: run.id })).fetchHistory();
    const [wait] = (events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
    expect(wait).toBe(TEST_NOTIFICATION_RETRY_SECONDS);
    const sends = (events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendNotification');
    expect(sends.map((e) => Number(e.activityTaskScheduledEventAttributes!.retryPolicy!.initialInterval!.seconds))).toEqual([2 * TEST_NOTIFICATION_RETRY_SECONDS]);
    const at = delivery.attempts.map((a: Json) => Date.parse(a.at)).sort((a: number, b: number) => a - b);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(TEST_NOTIFICATION_RETRY_SECONDS * 1000);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(2 * TEST_NOTIFICATION_RETRY_SECONDS * 1000);

    const metrics = parseMetrics((await bosun.api.get('/metrics')).text);
    expect(valueOf(metrics, 'bosun_notifications_total', { channel: channel.id, outcome: 'delivered' })).toBe(1);
    expect(valueOf(metrics, 'bosun_notifications_total', { channel: channel.id, outcome: 'failed_attempt' })).toBe(2);
    expect(valueOf(metrics, 'bosun_notification_delivery_seconds_count')).toBeGreaterThanOrEqual(1);
  }, 120_000);

  test('410 Gone disables the channel (recorded), later events are not sent; enabling it again and a test ping reach the receiver; redeliver sends the same webhook-id again', async () => {
    receiver.answer = () => ({ status: 410 });
    const channel = await addChannel({ name: `gone-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    receiver.secret = channel.secret;
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }]);
    await admin.runToEnd(deployment.id);
    const disabled = await eventually(async () => (await channels(`/${channel.id}`)).body.data, (c) => c.enabled === false);
    expect(disabled.disabled_reason).toContain('410');
    const [gone] = await deliveries(channel.id);
    expect(gone).toMatchObject({ status: 'dropped', reason: expect.stringContaining('410') });

    receiver.answer = () => ({ status: 204 });
    await admin.runToEnd(deployment.id);
    // A ping goes to a disabled channel too: it reaches the receiver, and the run's event before it never did.
    expect((await channels(`/${channel.id}/test`, 'post')).status).toBe(202);
    const [ping] = await eventually(async () => receiver.events('ping'), (r) => r.length === 1);
    expect(ping!.verified).toBe(true);
    expect(receiver.events('run.succeeded')).toHaveLength(1);

    expect((await channels(`/${channel.id}`, 'patch', { enabled: true })).body.data).toMatchObject({ enabled: true, disabled_reason: null });
    const again = await channels(`/${channel.id}/deliveries/${gone.id}/redeliver`, 'post');
    expect(again.status).toBe(202);
    await eventually(async () => receiver.events('run.succeeded'), (r) => r.length === 2);
    expect(receiver.events('run.succeeded').map((r) => r.id)).toEqual([gone.webhook_id, gone.webhook_id]);
    await eventually(() => deliveries(channel.id, '?status=delivered'), (d) => d.some((x) => x.id === gone.id));
  }, 90_000);

  test('a refused delivery says when its next attempt is due: after the retry policy its attempt runs under', async () => {
    receiver.answer = () => ({ status: 503 });
    const channel = await addChannel({ name: `refused-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }]);
    await admin.runToEnd(deployment.id);
    const [refused] = await eventually(() => deliveries(channel.id), (d) => d[0]?.attempt_count >= 1 && d[0]?.next_attempt_at !== null, 60_000);
    // After attempt n, the wait is NOTIFICATION_RETRY_SECONDS (1 s here) × 2^(n-1): not the 5 s × 2^(n-1) of the default.
    const wait = 2 ** (refused.attempt_count - 1) * TEST_NOTIFICATION_RETRY_SECONDS * 1000;
    const last = refused.attempts.map((a: Json) => Date.parse(a.at)).sort((a: number, b: number) => b - a)[0];
    const due = Date.parse(refused.next_attempt_at) - last;
    expect(due).toBeGreaterThanOrEqual(wait);
    expect(due).toBeLessThan(wait + 3_000);
    expect((await channels(`/${channel.id}`, 'delete')).status).toBe(204);
  }, 90_000);

  test('a receiver that hangs: the attempt gives up after 10 s, and the next one delivers the same message', async () => {
    let hung = false;
    receiver.answer = () => (hung ? { status: 204 } : ((hung = true), 'hang'));
    const channel = await addChannel({ name: `hang-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }]);
    await admin.runToEnd(deployment.id);
    const [delivery] = await eventually(() => deliveries(channel.id), (d) => d[0]?.status === 'delivered', 60_000);
    expect(delivery.attempts.map((a: Json) => [a.response_code, a.error])).toEqual([[null, expect.stringContaining('no answer within 10 s')], [204, null]]);
    expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(10_000);
    expect(receiver.received.map((r) => r.id)).toEqual([delivery.webhook_id, delivery.webhook_id]);
  }, 90_000);

  test('a schedule’s tick skipped during a change freeze is told, naming why', async () => {
    const channel = await addChannel({ name: `ticks-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['schedule.tick_skipped'] });
    receiver.secret = channel.secret;
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }], 'notify-scheduled');
    const schedule = (await admin.request('post', `/deployments/${deployment.id}/schedules`, { name: 'nightly', every: '24h', time_zone: 'UTC', paused: true })).body.data;
    const now = Date.now();
    const freeze = (await admin.request('post', '/freezes', { name: 'code-freeze', starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3600_000).toISOString() })).body.data;
    try {
      expect((await admin.request('post', `/deployments/${deployment.id}/schedules/${schedule.id}/trigger`)).status).toBe(202);
      const [told] = await eventually(async () => receiver.events('schedule.tick_skipped'), (r) => r.length === 1, 60_000);
      expect(told!.verified).toBe(true);
      expect(told!.json).toMatchObject({ schedule: { id: schedule.id, name: 'nightly', outcome: 'frozen', message: expect.stringContaining('code-freeze') }, summary: expect.stringContaining('did not run (frozen') });
    } finally {
      await admin.request('delete', `/freezes/${freeze.id}`);
    }
  }, 90_000);

  test('a deleted channel’s pending deliveries are dropped, with why', async () => {
    receiver.answer = () => ({ status: 500 });
    const channel = await addChannel({ name: `deleted-${Date.now()}`, type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    const deployment = await admin.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }]);
    await admin.runToEnd(deployment.id);
    await eventually(async () => receiver.received.length, (n) => n >= 1);
    expect((await channels(`/${channel.id}`, 'delete')).status).toBe(204);
    // The channel is gone, its deliveries with it from the API: the database says what became of them.
    const db = await MongoClient.connect(bosun.mongoUri);
    try {
      const deliveries = db.db().collection('notification_deliveries');
      const dropped = await eventually(() => deliveries.find({ channel_id: new ObjectId(channel.id as string) }).toArray(), (d) => d.length === 1 && d[0]!.status === 'dropped');
      expect(dropped[0]!.reason).toBe('the channel was deleted');
    } finally {
      await db.close();
    }
  }, 60_000);
});
