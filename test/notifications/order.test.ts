import { notificationDeliveryWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/eventually';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { userWithToken, type User } from '../support/client';
import { startReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * One subject's notifications in order when the dispatcher's own first attempts and the subject's
 * workflow both send them: a channel's pings (one subject, the channel) whose first is refused by
 * the receiver go out after it, in the order they were asked for, while another channel's are not
 * held up; once the subject has caught up, the next goes out at its first attempt again.
 */

type Json = any;

describe('notifications of one subject, in order', () => {
  let bosun: SharedBosun;
  let admin: User;
  let receiver: WebhookReceiver;

  const addChannel = async (name: string, path: string) => {
    const res = await admin.request('post', '/notification-channels', { name, type: 'webhook', url: `${receiver.url}?${path}`, events: ['run.succeeded'] });
    if (res.status !== 201) throw new Error(`add a channel: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const ping = async (channel: string) => expect((await admin.request('post', `/notification-channels/${channel}/test`)).status).toBe(202);
  const deliveries = async (channel: string) => (await admin.request('get', `/notification-channels/${channel}/deliveries?per_page=100`)).body.data as Json[];
  /** Each webhook-id once, in the order it first arrived. */
  const firstArrivals = (path: string) => [...new Set(receiver.received.filter((r: Received) => r.path.endsWith(`?${path}`)).map((r) => r.id))];

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = userWithToken(bosun, await bosun.token('order'));
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await receiver.stop();
    await bosun.stop();
  });

  test('a subject whose first notification is refused: the later ones go out after it, in order; another subject’s are not held up; then the subject goes on at first attempts', async () => {
    const held = await addChannel('held', 'held');
    const free = await addChannel('free', 'free');
    let refusals = 1;
    receiver.answer = (r) => (r.path.endsWith('?held') && refusals-- > 0 ? { status: 503, body: 'busy' } : { status: 204 });

    await ping(held.id);
    // The refused first attempt is recorded: the rest of this subject now waits behind it in its workflow.
    await eventually(() => deliveries(held.id), (d) => d[0]?.attempt_count === 1 && d[0]?.status === 'delivering', 60_000);
    for (let i = 0; i < 5; i += 1) {
      await ping(held.id);
      await ping(free.id);
    }
    const asked = (await eventually(() => deliveries(held.id), (d) => d.length === 6 && d.every((x) => x.status === 'delivered'), 90_000)).reverse();
    expect(firstArrivals('held')).toEqual(asked.map((d) => d.webhook_id));
    expect(asked.map((d) => d.attempts.map((a: Json) => a.response_code))).toEqual([[503, 204], [204], [204], [204], [204], [204]]);
    // The other channel's pings, another subject, each went out at its first attempt.
    expect((await eventually(() => deliveries(free.id), (d) => d.length === 5 && d.every((x) => x.status === 'delivered'))).map((d) => d.attempt_count)).toEqual([1, 1, 1, 1, 1]);

    // Caught up: the next ping is sent at once, by its first attempt, after all the others.
    await ping(held.id);
    const [latest] = await eventually(() => deliveries(held.id), (d) => d.length === 7 && d[0].status === 'delivered');
    expect(firstArrivals('held')).toEqual([...asked.map((d) => d.webhook_id), latest.webhook_id]);
    expect(latest.attempts.map((a: Json) => a.response_code)).toEqual([204]);
    // Only the refused one (and, behind it, those that came while it was retried) went to the subject's workflow: never the latest.
    const { events } = await bosun.temporal.workflow.getHandle(notificationDeliveryWorkflowId(held.id, { kind: 'channel', id: held.id })).fetchHistory();
    const signalled = (events ?? []).flatMap((e) => (e.workflowExecutionSignaledEventAttributes ? [JSON.parse(Buffer.from(e.workflowExecutionSignaledEventAttributes.input!.payloads![0]!.data!).toString())] : []));
    expect(signalled[0]).toEqual({ deliveryId: asked[0].id, round: 0, attemptsMade: 1 });
    expect(signalled.map((ref) => ref.deliveryId)).not.toContain(latest.id);
  }, 180_000);

  test('a 410 after another delivery of the batch was answered: that one shows delivered, the 410 dropped, the channel disabled', async () => {
    const gone = await addChannel('gone', 'gone');
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let requests = 0;
    receiver.answer = async (r) => {
      if (!r.path.endsWith('?gone')) return { status: 204 };
      requests += 1;
      // The first holds the drain's batch until the next two pings are recorded: they then go out in one batch, in order.
      if (requests === 1) await held;
      return requests <= 2 ? { status: 204 } : { status: 410 };
    };
    await ping(gone.id);
    await eventually(async () => firstArrivals('gone').length, (n) => n === 1);
    await ping(gone.id);
    await ping(gone.id);
    release();
    const found = (await eventually(() => deliveries(gone.id), (d) => d.length === 3 && d.every((x) => ['delivered', 'dropped'].includes(x.status)), 60_000)).reverse();
    expect(firstArrivals('gone')).toEqual(found.map((d) => d.webhook_id));
    expect(found.map((d) => [d.status, d.attempts.map((a: Json) => a.response_code)])).toEqual([
      ['delivered', [204]],
      ['delivered', [204]],
      ['dropped', [410]],
    ]);
    const channel = (await admin.request('get', `/notification-channels/${gone.id}`)).body.data;
    expect(channel.disabled_reason).toContain('410');
  }, 120_000);
});
