import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { userWithToken, type User } from '../support/client';
import { runCli } from '../support/processes';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/* `bosun notify`: channels and deliveries from the command line, against the real stack and a local receiver. */

describe('bosun notify', () => {
  let bosun: SharedBosun;
  let admin: User;
  let env: NodeJS.ProcessEnv;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    bosun = await sharedBosun();
    const token = await bosun.token('cli-notify');
    admin = userWithToken(bosun, token);
    env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await receiver?.stop();
    await bosun?.stop();
  });

  test('lists channels and deliveries, sends a ping, redelivers with the same webhook-id; an unknown channel exits 1', async () => {
    const created = await admin.request('post', '/notification-channels', { name: 'ops-hook', type: 'webhook', url: receiver.url, events: ['run.succeeded'] });
    expect(created.status).toBe(201);
    receiver.secret = created.body.data.secret;
    const deployment = await admin.defineDeployment(await admin.addServer(), [{ name: 'hello', command: 'echo hello' }], 'notified');
    const run = await admin.runToEnd(deployment.id);
    await eventually(async () => receiver.events('run.succeeded'), (r) => r.length === 1, 30_000);

    const channels = await runCli(['notify', 'channels'], env);
    expect(channels.code).toBe(0);
    expect(channels.stdout).toMatch(new RegExp(`^${created.body.data.id}\\tops-hook\\twebhook\\t${receiver.url.replace(/[.]/g, '\\.')}\\trun\\.succeeded\\tenabled$`, 'm'));

    const ping = await runCli(['notify', 'test', 'ops-hook'], env);
    expect([ping.code, ping.stdout]).toEqual([0, 'ops-hook: a ping is on its way\n']);
    await eventually(async () => receiver.events('ping'), (r) => r.length === 1, 30_000);
    const listed = await eventually(async () => (await runCli(['notify', 'deliveries', 'ops-hook'], env)).stdout, (out) => /\tping\t.*\tdelivered\t1\t204\t-$/m.test(out), 30_000);
    expect(listed).toMatch(/\trun\.succeeded\t.*\tdelivered\t1\t204\t-$/m);

    const deliveries = JSON.parse((await runCli(['notify', 'deliveries', 'ops-hook', '--json'], env)).stdout) as Array<{ id: string; webhook_id: string; event: { type: string; subject: { id: string } } }>;
    const told = deliveries.find((d) => d.event.type === 'run.succeeded')!;
    expect(told.event.subject.id).toBe(run.id);
    const again = await runCli(['notify', 'redeliver', 'ops-hook', told.id], env);
    expect([again.code, again.stdout]).toEqual([0, `ops-hook: delivery ${told.id} is sent again\n`]);
    const twice = await eventually(async () => receiver.events('run.succeeded'), (r) => r.length === 2, 30_000);
    expect(twice.map((r) => r.id)).toEqual([told.webhook_id, told.webhook_id]);
    expect(twice.every((r) => r.verified)).toBe(true);

    const missing = await runCli(['notify', 'deliveries', 'nope'], env);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('No channel "nope"')]);
    // Another organization's token sees none of it.
    const other = await runCli(['notify', 'channels', '--json'], { ...env, BOSUN_TOKEN: await bosun.token('cli-notify-other') });
    expect(JSON.parse(other.stdout)).toEqual([]);
  }, 120_000);
});
