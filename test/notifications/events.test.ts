import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken, type User } from '../support/client';
import { Sshd } from '../support/sshd';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';

/*
 * Events beyond a run's end, on the real stack: a watched server going offline and presenting another
 * host key; a fleet run that fails and rolls back by itself, told once to a channel that wants only
 * final failures and twice to one that wants every failure.
 */

type Json = any;

describe('notification events of servers and rollbacks', () => {
  let bosun: Bosun;
  let admin: User;
  let sshd: Sshd;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 1 });
    admin = userWithToken(bosun, await bosun.token('events', ['admin'], 'events-admin'));
    sshd = await Sshd.startPrivate();
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await receiver.stop();
    await sshd.stop();
    await bosun.stop();
  });

  const addChannel = async (body: Json) => {
    const res = await admin.request('post', '/notification-channels', body);
    if (res.status !== 201) throw new Error(`add a channel: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  test('a server going offline, then presenting a changed host key, is told each time', async () => {
    const channel = await addChannel({ name: 'servers', type: 'webhook', url: receiver.url, events: ['server.offline', 'server.host_key_changed'] });
    receiver.secret = channel.secret;
    const id = await admin.addServer({ host: '127.0.0.1', title: 'watched', sshd: sshd.info });
    await sshd.stop();
    const [offline] = await eventually(async () => receiver.events('server.offline'), (r) => r.length === 1, 30_000);
    expect(offline!.verified).toBe(true);
    expect(offline!.json).toMatchObject({ summary: 'Server watched is offline', server: { id, title: 'watched', status: 'offline', reason: expect.stringMatching(/refused/) }, console_url: `${bosun.url}/servers/${id}` });

    sshd.rotateHostKey();
    await sshd.resume();
    const [changed] = await eventually(async () => receiver.events('server.host_key_changed'), (r) => r.length === 1, 30_000);
    expect(changed!.json).toMatchObject({ server: { id, status: 'unverified', reason: expect.stringMatching(/Host key .* changed/) } });
    expect((await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(admin.token))).body.data.status).toBe('unverified');
    expect(receiver.events('server.offline')).toHaveLength(1);
  }, 90_000);

  test('a fleet run that rolls back by itself: run.rolled_back to both channels, run.failed only to the one that wants every failure', async () => {
    await admin.addServer({ host: '127.0.0.2', tags: ['fr'] });
    await admin.addServer({ host: '127.0.0.3', tags: ['fr'] });
    const here = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';
    const fleet = await admin.define({
      name: 'rolls-back',
      targets: { tags: ['fr'] },
      strategy: { batch_size: 2, max_failures: 0 },
      steps: [{ name: 'release', command: `${here}; echo "release on $here"; [ "$here" != 127.0.0.3 ] || exit 7` }],
      rollback: { automatic: true, steps: [{ name: 'restore', command: 'echo restored' }] },
    });
    const events = ['run.failed', 'run.rolled_back', 'run.succeeded'];
    const final = await addChannel({ name: 'final-only', type: 'webhook', url: `${receiver.url}?final`, events, filter: { only_final_failure: true } });
    const every = await addChannel({ name: 'every-failure', type: 'webhook', url: `${receiver.url}?every`, events });
    const run = await admin.runToEnd(fleet.id, 90_000);
    expect(run).toMatchObject({ status: 'failed', rollback: { status: 'success' } });

    const told = (channel: Json) => eventually(
      async () => (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data as Json[],
      (d) => d.length > 0 && d.every((x) => x.status === 'delivered'),
    );
    // The channel told of every failure hears both, the rollback first (it ends before the run does).
    await eventually(async () => (await told(every)).length, (n) => n === 2);
    expect((await told(every)).map((d) => d.event.type).reverse()).toEqual(['run.rolled_back', 'run.failed']);
    expect((await told(final)).map((d) => d.event.type)).toEqual(['run.rolled_back']);
    const rolledBack = receiver.events('run.rolled_back')[0]!.json;
    expect(rolledBack).toMatchObject({ run: { id: run.id, rollback: { status: 'success', summary: expect.stringContaining('rolled back on') } }, deployment: { name: 'rolls-back' } });
    // Who triggered it, as the API reads it: the token, and its identity beside it.
    expect(rolledBack.run).toMatchObject({ triggered_by: 'API token: events-admin', actor: { type: 'service_account', name: 'events-admin' } });
    const failed = receiver.events('run.failed')[0]!.json;
    expect(failed.run.failed_step).toMatchObject({ name: 'release', server: expect.any(String), last_lines: expect.stringContaining('release on 127.0.0.3') });
  }, 120_000);

  test('a fleet run paused between batches tells run.paused with who and why; resumed, it tells run.succeeded', async () => {
    const work = sharedFolder('bosun-paused-');
    try {
      await admin.addServer({ host: '127.0.0.4', tags: ['pz'] });
      await admin.addServer({ host: '127.0.0.5', tags: ['pz'] });
      const fleet = await admin.define({
        name: 'pausable',
        targets: { tags: ['pz'] },
        strategy: { batch_size: 1 },
        steps: [{ name: 'hold', command: `while [ ! -e ${work}/go ]; do sleep 0.1; done` }],
      });
      const channel = await addChannel({ name: 'pauses', type: 'webhook', url: `${receiver.url}?pauses`, events: ['run.paused', 'run.succeeded'], filter: { deployments: [fleet.id] } });
      receiver.secret = channel.secret;
      const { run_id: runId } = await admin.trigger(fleet.id);
      await admin.waitForRun(fleet.id, runId, (run) => run.targets.some((t: { status: string }) => t.status === 'running'));
      expect((await admin.decide(fleet.id, runId, 'pause', { reason: 'error budget check' })).status).toBe(200);
      writeFileSync(`${work}/go`, '');
      await admin.waitForRun(fleet.id, runId, (run) => run.status === 'paused');
      // Other tests' channels hear of this run too: this one's requests are addressed `?pauses`.
      const toThis = (type: string) => receiver.events(type).filter((e) => e.path.endsWith('?pauses') && e.json.run.id === runId);
      const [paused] = await eventually(async () => toThis('run.paused'), (list) => list.length === 1, 30_000);
      expect(paused!.verified).toBe(true);
      expect(paused!.json).toMatchObject({ summary: expect.stringContaining('is paused'), run: { id: runId, status: 'paused', pause: { reason: 'error budget check' } }, deployment: { name: 'pausable' } });
      expect((await admin.decide(fleet.id, runId, 'resume')).status).toBe(200);
      expect((await admin.waitForRun(fleet.id, runId)).status).toBe('success');
      await eventually(async () => toThis('run.succeeded'), (list) => list.length === 1, 30_000);
      // Told once each, in the order they happened.
      const told = (await admin.request('get', `/notification-channels/${channel.id}/deliveries`)).body.data as Json[];
      expect(told.map((d) => d.event.type).reverse()).toEqual(['run.paused', 'run.succeeded']);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
