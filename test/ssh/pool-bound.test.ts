import { execFileSync } from 'node:child_process';
import { startBosun } from '../support/bosun';
import { eventually } from '../support/eventually';
import { parseMetrics, valueOf } from '../support/metrics';
import { privateFleet } from '../support/server-fleet';

/*
 * SSH_POOL_MAX at 3 on a Bosun of the test's own, over eight servers: one private sshd on eight
 * loopback addresses of its own, so every connection to its port is this Bosun's. Connections are
 * counted on the sshd's side, by the kernel (`ss`), from inside each step and after the run.
 */

const ADDRESSES = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `127.0.71.${n}`);
const POOL_MAX = 3;

const fleet = privateFleet({ org: 'pool-bound', addresses: ADDRESSES, start: () => startBosun({ healthIntervalSeconds: 3600, env: { SSH_POOL_MAX: String(POOL_MAX) } }), titled: 'node' });

/** The addresses of the connections established to the sshd now (each one's local address on the sshd's side). */
const openConnections = (): string[] =>
  execFileSync('ss', ['-Htn', 'state', 'established', `( sport = :${fleet.sshd.info.port} )`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/)[2]!.replace(/:\d+$/, ''));

/** A step that notes its execution and prints how many connections the sshd holds while it runs. */
const countingStep = (tag: string) => ({
  name: 'count',
  command: `${fleet.record.note(tag)}; echo "open: $(ss -Htn state established '( sport = :${fleet.sshd.info.port} )' | wc -l)"`,
});

/** The most connections any target's step saw open while it ran. */
async function mostSeenOpen(deploymentId: string, runId: string): Promise<number> {
  const outputs = await Promise.all(fleet.servers.map(async (id) => (await fleet.ops.getTarget(deploymentId, runId, id)).steps[0].output as string));
  return Math.max(...outputs.map((output) => Number(/open: (\d+)/.exec(output)![1])));
}

const scrape = async () => parseMetrics((await fleet.bosun.api.get('/metrics')).text);

describe('the SSH pool bound (SSH_POOL_MAX)', () => {
  test('a batch larger than the bound runs all at once; once idle, the pool shrinks back to the bound', async () => {
    const deployment = await fleet.ops.define({ targets: { server_ids: fleet.servers }, strategy: { batch_size: 8 }, steps: [countingStep('wide')] });
    const { run_id: runId } = await fleet.ops.trigger(deployment.id);
    const run = await fleet.ops.waitForRun(deployment.id, runId);
    expect(run.summary).toMatchObject({ total: 8, success: 8 });
    // Busy connections are never closed for the bound: more than three were open at once.
    expect(await mostSeenOpen(deployment.id, runId)).toBeGreaterThan(POOL_MAX);
    // Over the bound, idle connections close after 10 s; within it, after a minute: 40 s can only be the bound at work.
    await eventually(async () => openConnections().length, (open) => open === POOL_MAX, 40_000);
    const samples = await scrape();
    expect([valueOf(samples, 'bosun_ssh_pool_connections'), valueOf(samples, 'bosun_ssh_pool_idle_connections')]).toEqual([POOL_MAX, POOL_MAX]);
    for (const address of ADDRESSES) expect(fleet.record.count('wide', address)).toBe(1);
  });

  test('batches of two: never more than the bound open; the least recently used is closed first and reopened when its server is used again', async () => {
    const deployment = await fleet.ops.define({ targets: { server_ids: fleet.servers }, strategy: { batch_size: 2 }, steps: [countingStep('narrow')] });
    for (const round of [1, 2]) {
      const before = await scrape();
      const { run_id: runId } = await fleet.ops.trigger(deployment.id);
      const run = await fleet.ops.waitForRun(deployment.id, runId);
      expect(run).toMatchObject({ status: 'success', summary: { total: 8, success: 8 } });
      expect(await mostSeenOpen(deployment.id, runId)).toBeLessThanOrEqual(POOL_MAX);
      // The last batch's two fleet.servers were used last: theirs are among the three kept.
      const open = await eventually(async () => openConnections(), (addresses) => addresses.length === POOL_MAX, 20_000);
      expect(open).toEqual(expect.arrayContaining(['127.0.71.7', '127.0.71.8']));
      for (const address of ADDRESSES) expect(fleet.record.count('narrow', address)).toBe(round);
      // What the bound cost, as an operator sees it: the second round finds the last three servers kept and uses
      // them last, so every one of its eight targets logs in, and each login closes the least recently used.
      if (round === 2) {
        const after = await scrape();
        const grew = (name: string) => valueOf(after, name) - valueOf(before, name);
        expect([grew('bosun_ssh_connections_opened_total'), grew('bosun_ssh_pool_evictions_total')]).toEqual([8, 8]);
      }
    }
  });
});
