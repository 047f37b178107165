import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';
import { executionRecord } from '../support/fixtures';
import { addFleet, fleetOn } from '../support/server-fleet';
import { Sshd } from '../support/sshd';

/*
 * sshd's MaxStartups throttling: ten servers on one private sshd that lets two connections at most
 * be unauthenticated at once (`MaxStartups 2:100:2`: past two, every new one is dropped), and a
 * batch of ten that opens their ten connections together. A dropped connection is a transport
 * failure, retried; never a failed step, and never a command run twice.
 */

const ADDRESSES = Array.from({ length: 10 }, (_, i) => `127.0.73.${i + 1}`);

let bosun: SharedBosun;
let sshd: Sshd;
let ops: User;
let servers: string[];
const record = executionRecord('max-startups');

beforeAll(async () => {
  sshd = await Sshd.startPrivate(ADDRESSES, { config: ['MaxStartups 2:100:2'] });
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'max-startups');
  // One at a time: each verification opens a connection of its own.
  servers = await addFleet(ops, fleetOn(sshd.info, ADDRESSES, 'throttled'));
}, 120_000);
afterAll(async () => {
  ops?.close();
  await bosun?.stop();
  await sshd?.stop({ dropSessions: true });
  record.remove();
});

test('connections sshd drops past MaxStartups are retried: every step succeeds, each run exactly once', async () => {
  const deployment = await ops.define({
    targets: { server_ids: servers },
    strategy: { batch_size: 10 },
    steps: [
      { name: 'first', command: record.note('first') },
      { name: 'second', command: record.note('second') },
    ],
  });
  const { run_id: runId } = await ops.trigger(deployment.id);
  // Throttled connections wait out the transport retries' backoff (1 s, then 2, 4…).
  const run = await ops.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run).toMatchObject({ status: 'success', summary: { total: 10, success: 10 } });
  for (const address of ADDRESSES) expect([record.count('first', address), record.count('second', address)]).toEqual([1, 1]);
  // sshd did throttle: some first steps were retried after a dropped connection, and say so.
  const outputs = await Promise.all(servers.map(async (id) => (await ops.getTarget(deployment.id, runId, id)).steps[0].output as string));
  const throttled = outputs.filter((output) => /closed the connection before the SSH handshake: sshd throttling new connections \(MaxStartups\), or not an SSH server; retrying ---/.test(output));
  expect(throttled.length).toBeGreaterThan(0);
});
