import { sharedBosun } from '../support/shared-bosun';
import { privateFleet } from '../support/server-fleet';

/*
 * sshd's MaxStartups throttling: ten servers on one private sshd that lets two connections at most
 * be unauthenticated at once (`MaxStartups 2:100:2`: past two, every new one is dropped), and a
 * batch of ten that opens their ten connections together. A dropped connection is a transport
 * failure, retried; never a failed step, and never a command run twice.
 */

const ADDRESSES = Array.from({ length: 10 }, (_, i) => `127.0.73.${i + 1}`);

const fleet = privateFleet({ org: 'max-startups', addresses: ADDRESSES, sshdConfig: ['MaxStartups 2:100:2'], start: sharedBosun, titled: 'throttled' });

test('connections sshd drops past MaxStartups are retried: every step succeeds, each run exactly once', async () => {
  const deployment = await fleet.ops.define({
    targets: { server_ids: fleet.servers },
    strategy: { batch_size: 10 },
    steps: [
      { name: 'first', command: fleet.record.note('first') },
      { name: 'second', command: fleet.record.note('second') },
    ],
  });
  const { run_id: runId } = await fleet.ops.trigger(deployment.id);
  // Throttled connections wait out the transport retries' backoff (1 s, then 2, 4…).
  const run = await fleet.ops.waitForRun(deployment.id, runId, undefined, 120_000);
  expect(run).toMatchObject({ status: 'success', summary: { total: 10, success: 10 } });
  for (const address of ADDRESSES) expect([fleet.record.count('first', address), fleet.record.count('second', address)]).toEqual([1, 1]);
  // sshd did throttle: some first steps were retried after a dropped connection, and say so.
  const outputs = await Promise.all(fleet.servers.map(async (id) => (await fleet.ops.getTarget(deployment.id, runId, id)).steps[0].output as string));
  const throttled = outputs.filter((output) => /closed the connection before the SSH handshake: sshd throttling new connections \(MaxStartups\), or not an SSH server; retrying ---/.test(output));
  expect(throttled.length).toBeGreaterThan(0);
});
