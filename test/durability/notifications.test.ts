import { eventually, runEnded } from '../support/bosun';
import { personToken, userAt, type User } from '../support/client';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { startReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * The durability story: a team's webhook receiver is down while 30 runs end (and three
 * conversations wait for approval, then finish), and Bosun itself — API and worker — is SIGKILLed
 * meanwhile: down for all of that, and until Bosun has tried every run's event and been refused (a
 * minute or more; each delivery then waits for its retry, from 5 s, doubling, when the receiver is back). Once both are back, every event reaches the receiver: none lost, each
 * conversation's in order, every copy of a message with the same webhook-id, every signature valid.
 */

type Json = any;

const RUNS = 30;

describe('notifications survive a receiver outage and Bosun killed -9', () => {
  const bosun = new BosunProcesses(externalServicesEnv('notify'));
  let ops: User;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    await bosun.createToken('notify');
    ({ ops } = await bosun.launchApiAndWorker());
    receiver = await startReceiver();
  }, 150_000);
  afterAll(async () => {
    await receiver.stop();
    await bosun.stop();
  });

  test('30 runs end while the receiver is down and Bosun is killed -9: all delivered, in order, duplicates share their webhook-id', async () => {
    const channel = (await ops.request('post', '/notification-channels', { name: 'ops', type: 'webhook', url: receiver.url, events: ['run.succeeded', 'run.failed', 'conversation.awaiting_approval', 'conversation.finished'] })).body.data;
    receiver.secret = channel.secret;
    const servers = [await ops.addServer({ host: '127.0.0.2' }), await ops.addServer({ host: '127.0.0.3' }), await ops.addServer({ host: '127.0.0.4' })];
    const deployments = await Promise.all(servers.map((server, i) => ops.defineDeployment(server, [{ name: 'work', command: `echo working; test $(( RANDOM % 3 )) -ne 0 || exit ${i + 1}` }], `deploy-${i}`)));
    await ops.setPolicy({ allow_destructive: false, require_approval_for: ['read', 'change', 'destructive'] });

    await receiver.stop();

    // The first half of the runs, and conversations that wait for a person.
    const runs: Array<{ deployment: string; run: string }> = [];
    const trigger = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const deployment = deployments[runs.length % deployments.length]!.id as string;
        runs.push({ deployment, run: (await ops.trigger(deployment)).run_id });
      }
    };
    await trigger(RUNS / 2);
    const conversations: string[] = [];
    for (const server of servers) conversations.push((await ops.startConversation(server, 'show uptime')).id);
    // People decide on steps: a person's token, used against whichever API process runs.
    const approverToken = (await personToken(ops, 'Nia', 'operator')).token;
    const waiting = await Promise.all(conversations.map((id) => ops.waitForConversation(id, (c: Json) => c.status === 'awaiting_approval')));
    await Promise.all(runs.map(({ deployment, run }) => ops.waitForRun(deployment, run, runEnded, 120_000)));

    // Bosun killed -9, API and worker, and started again.
    for (const p of [...bosun.alive('api'), ...bosun.alive('worker')]) await p.stop('SIGKILL');
    const relaunched = await bosun.launchApiAndWorker();
    ops = relaunched.ops;
    const approver = userAt(await relaunched.api.ready(), approverToken);

    await trigger(RUNS / 2);
    // The new worker takes over the conversations once their old worker's hold on them lapses: an approval until one is recorded.
    for (const [i, conversation] of waiting.entries()) {
      const id = conversations[i]!;
      const step = conversation.steps[0].id;
      await eventually(
        async () => ((await ops.getConversation(id)).steps[0].approval.decision === 'approved' ? 202 : (await approver.request('post', `/conversations/${id}/steps/${step}/approve`)).status),
        (status) => status === 202,
        90_000,
      );
    }
    await Promise.all(runs.map(({ deployment, run }) => ops.waitForRun(deployment, run, runEnded, 120_000)));
    await Promise.all(conversations.map((id) => ops.waitForConversation(id, (c: Json) => c.status === 'completed')));
    expect(receiver.received).toEqual([]);

    // The receiver is back once all that is done and every run's event was refused at least once.
    const refused = (d: Json) => d.attempts.length > 0 && d.attempts[0].error !== null;
    await eventually(
      async () => (await ops.request('get', `/notification-channels/${channel.id}/deliveries?per_page=100`)).body.data.filter((d: Json) => d.event.type.startsWith('run.')),
      (deliveries: Json[]) => deliveries.length === RUNS && deliveries.every(refused),
      5 * 60_000,
    );
    await receiver.start();

    const expected = RUNS + 2 * conversations.length;
    const distinct = () => new Map(receiver.received.map((r) => [r.id, r]));
    await eventually(async () => distinct().size, (n) => n >= expected, 6 * 60_000);
    const messages = [...distinct().values()];
    expect(messages).toHaveLength(expected);

    // Every run's end, once per webhook-id, with its true status; every signature valid.
    const ended = await Promise.all(runs.map(({ deployment, run }) => ops.getRun(deployment, run)));
    const byRun = new Map(messages.filter((m) => m.json.type.startsWith('run.')).map((m) => [m.json.run.id as string, m]));
    expect(byRun.size).toBe(RUNS);
    for (const run of ended) expect([run.id, byRun.get(run.id)?.json.type]).toEqual([run.id, run.status === 'success' ? 'run.succeeded' : 'run.failed']);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    // Duplicates (an attempt whose answer was lost) are the same message: same webhook-id, same event.
    const eventsById = new Map<string, Set<string>>();
    for (const r of receiver.received) eventsById.set(r.id, (eventsById.get(r.id) ?? new Set()).add(r.json.id));
    for (const [, events] of eventsById) expect(events.size).toBe(1);

    // Each conversation's events arrived in the order they happened.
    const firstArrival = (conversation: string, type: string) => receiver.received.findIndex((r: Received) => r.json.type === type && r.json.conversation?.id === conversation);
    for (const conversation of conversations) {
      const [asked, finished] = [firstArrival(conversation, 'conversation.awaiting_approval'), firstArrival(conversation, 'conversation.finished')];
      expect([conversation, asked >= 0, finished > asked]).toEqual([conversation, true, true]);
    }

    // The deliveries say so (the last answers' writes may trail the receiver by a moment): each delivered, every run's after
    // failed attempts (a conversation's second event waited behind its first, so it may have needed one).
    const listed = await eventually(
      async () => (await ops.request('get', `/notification-channels/${channel.id}/deliveries?per_page=100`)).body,
      (body) => body.data.every((d: Json) => d.status === 'delivered'),
    );
    expect(listed.meta.total).toBe(expected);
    const runDeliveries = listed.data.filter((d: Json) => d.event.type.startsWith('run.'));
    expect(runDeliveries.filter((d: Json) => !(d.attempt_count >= 2 && d.attempts[0].error !== null)).map((d: Json) => [d.event.type, d.attempts])).toEqual([]);
  }, 12 * 60_000);

  test('a burst of 300 pings to 20 channels with the worker killed -9 mid-burst: every one delivered, each channel’s in order, copies share their webhook-id', async () => {
    const burst = await startReceiver();
    try {
      const channels: Json[] = [];
      for (let i = 0; i < 20; i += 1) channels.push((await ops.request('post', '/notification-channels', { name: `burst-${i}`, type: 'webhook', url: `${burst.url}?${i}`, events: ['run.succeeded'] })).body.data);
      // The worker killed as the 40th message arrives: its drain is in the middle of a batch of first attempts.
      let killed: Promise<unknown> | null = null;
      burst.answer = () => {
        if (burst.received.length === 40) killed = Promise.all(bosun.alive('worker').map((p) => p.stop('SIGKILL')));
        return { status: 204 };
      };
      // Each channel's pings are one subject (the channel): asked for in turn, 15 each.
      for (let round = 0; round < 15; round += 1) {
        for (const channel of channels) expect((await ops.request('post', `/notification-channels/${channel.id}/test`)).status).toBe(202);
      }
      await eventually(async () => killed, (k) => k !== null, 120_000);
      await killed;
      const worker = await bosun.launch('worker');
      await worker.ready();

      const distinct = () => new Set(burst.received.map((r) => r.id)).size;
      await eventually(async () => distinct(), (n) => n >= 300, 5 * 60_000);
      expect(distinct()).toBe(300);
      for (const [i, channel] of channels.entries()) {
        const listed = await eventually(
          async () => (await ops.request('get', `/notification-channels/${channel.id}/deliveries?per_page=100`)).body.data as Json[],
          (d) => d.length === 15 && d.every((x) => x.status === 'delivered'),
        );
        // In the order they were asked for (the deliveries list is newest first), each first arrival.
        const arrived = [...new Set(burst.received.filter((r) => r.path.endsWith(`?${i}`)).map((r) => r.id))];
        expect([channel.name, arrived]).toEqual([channel.name, listed.reverse().map((d) => d.webhook_id)]);
      }
      // A message sent again (its answer not recorded before the kill) is the same message: same webhook-id, same event.
      const eventsById = new Map<string, Set<string>>();
      for (const r of burst.received) eventsById.set(r.id, (eventsById.get(r.id) ?? new Set()).add(r.json.id));
      expect([...eventsById.values()].filter((events) => events.size !== 1)).toEqual([]);
    } finally {
      await burst.stop();
    }
  }, 8 * 60_000);
});
