import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';

/*
 * WORKER_MAX_CONCURRENT_STEPS caps how many runs one worker runs at once: a fleet batch larger than
 * it runs that many targets at a time, the others queued until a slot frees. Four "servers" are the
 * test sshd on four loopback addresses.
 */

const ADDRESSES = [2, 3, 4, 5].map((n) => `127.0.0.${n}`);

let bosun: Bosun;
let ops: User;

beforeAll(async () => {
  bosun = await startBosun({ maxConcurrentSteps: 2 });
  ops = await asUser(bosun, 'small-worker');
}, 60_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
});

test('a worker that runs two steps at once runs a batch of four targets two at a time, all succeeding', async () => {
  const servers: string[] = [];
  for (const [i, host] of ADDRESSES.entries()) servers.push(await ops.addServer({ host, title: `small-${i + 1}` }));
  const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 4 }, steps: [{ name: 'work', command: 'sleep 1; echo done' }] });
  const run = await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id);

  expect(run.summary).toMatchObject({ total: 4, success: 4 });
  const spans: Array<[number, number]> = run.targets.map((t: { started_at: string; completed_at: string }) => [Date.parse(t.started_at), Date.parse(t.completed_at)]);
  // How many targets were running as each one began: never more than two, and two at some point.
  const runningAt = spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length);
  expect(Math.max(...runningAt)).toBe(2);
}, 120_000);
