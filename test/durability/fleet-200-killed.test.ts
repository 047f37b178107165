import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runEnded } from '../support/bosun';
import { eventually } from '../support/eventually';
import { BosunProcesses, externalServicesEnv } from '../support/processes';
import { addFleet, fleetOn } from '../support/server-fleet';
import { Sshd } from '../support/sshd';

/*
 * Issue 39's edge at the size the suite affords: a rolling window over 200 servers (each a distinct
 * SSH endpoint: 14 private sshds on their own ports, each on the same 15 loopback addresses), its
 * worker killed (SIGKILL) when 100 targets have finished: a new worker carries the run to its end,
 * no finished step runs again, and every target's command completes exactly once. Each command
 * waits for its own go file before it notes itself, and the test gives the go to the first hundred
 * only before the kill: the commands running at the kill had done nothing yet (they run again, as an
 * interrupted command does), none was between its note and its result.
 */

type Target = { server_id: string; title: string; status: string; steps: Array<{ status: string; attempts: number }> };

const TARGETS = 200;
const ADDRESSES = Array.from({ length: 15 }, (_, i) => `127.0.90.${i + 1}`);
const WINDOW = 20;

describe('a 200-target window run survives the death of its worker', () => {
  // 200 servers added and verified, a run of 200 targets read as it goes: more than a token's default 600 requests a minute.
  const bosun = new BosunProcesses({ ...externalServicesEnv('fleet-200'), RATE_LIMIT_PER_MINUTE: '100000' });
  const daemons: Sshd[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'bosun-fleet-200-'));
  // The sshd's login may be another user than the one running the tests.
  execFileSync('chmod', ['777', dir]);
  afterAll(async () => {
    await bosun.stop();
    await Promise.all(daemons.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Where a command is: its SSH endpoint, address and port (SSH_CONNECTION's third and fourth fields). */
  const here = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3,4 | tr " " _)';
  const command = `${here}; while [ ! -e ${dir}/go-$here ]; do sleep 0.1; done; echo x >> ${dir}/ran-$here`;
  const endpoint = (host: string, port: number) => `${host}_${port}`;
  const ranCount = (key: string) => (existsSync(path.join(dir, `ran-${key}`)) ? readFileSync(path.join(dir, `ran-${key}`), 'utf8').split('\n').filter(Boolean).length : 0);

  test('SIGKILL the worker when 100 of 200 targets have finished: the run ends, each command completed once, nothing finished ran again', async () => {
    await bosun.createToken('fleet-200');
    const { worker, ops } = await bosun.launchApiAndWorker();
    for (let i = 0; i < Math.ceil(TARGETS / ADDRESSES.length); i += 1) daemons.push(await Sshd.startPrivate(ADDRESSES));
    const all = daemons.flatMap((sshd, d) => fleetOn(sshd.info, ADDRESSES, 'wide', 1 + d * ADDRESSES.length)).slice(0, TARGETS);
    // Ten at a time: each server is verified over SSH as it is added.
    const ids = await addFleet(ops, all, { atOnce: 10 });
    const servers = all.map(({ host, sshd }, i) => ({ id: ids[i]!, key: endpoint(host, sshd.port) }));
    const keyOf = new Map(servers.map((s) => [s.id, s.key]));
    const deployment = await ops.define({
      name: 'wide',
      targets: { server_ids: servers.map((s) => s.id) },
      strategy: { max_concurrency: WINDOW },
      steps: [{ name: 'ship', command }],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);

    // The go for the first hundred targets in the run's order; the next ones take their slots and wait.
    const first = await eventually(async () => (await ops.getRun(deployment.id, runId)) as { targets: Target[] }, (r) => r.targets.length === TARGETS, 60_000);
    const order = first.targets.map((t) => keyOf.get(t.server_id)!);
    for (const key of order.slice(0, 100)) writeFileSync(path.join(dir, `go-${key}`), '');
    await ops.waitForRun(deployment.id, runId, (r) => r.targets.filter((t: Target) => t.status === 'success').length >= 100, 240_000);
    await worker.stop('SIGKILL');
    await (await bosun.launch('worker')).ready();
    for (const key of order.slice(100)) writeFileSync(path.join(dir, `go-${key}`), '');

    const run = await ops.waitForRun(deployment.id, runId, runEnded, 300_000);
    expect(run.status).toBe('success');
    expect(run.summary).toMatchObject({ total: TARGETS, success: TARGETS });
    const finishedBefore = new Set(first.targets.slice(0, 100).map((t) => t.server_id));
    const wrong: string[] = [];
    for (const target of run.targets as Target[]) {
      const key = keyOf.get(target.server_id)!;
      if (ranCount(key) !== 1) wrong.push(`${target.title}: completed ${ranCount(key)} times, attempted ${target.steps[0]!.attempts}: ${JSON.stringify((await ops.getTarget(deployment.id, runId, target.server_id)).steps[0].output)}`);
      // The first hundred had finished before the kill: none was attempted again.
      if (finishedBefore.has(target.server_id) && target.steps[0]!.attempts !== 1) wrong.push(`${target.title}: attempted ${target.steps[0]!.attempts} times`);
    }
    expect(wrong).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.startsWith('ran-'))).toHaveLength(TARGETS);
  }, 600_000);
});
