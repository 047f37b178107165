import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runEnded } from '../support/bosun';
import { eventually } from '../support/eventually';
import { BosunProcesses, externalServicesEnv, type BosunProcess } from '../support/processes';
import { addFleet, fleetOn } from '../support/server-fleet';
import { Sshd } from '../support/sshd';

/*
 * Issue 39's edge at the size the suite affords: 200 servers (each a distinct SSH endpoint: 14
 * private sshds on their own ports, each on the same 15 loopback addresses), a run over them all, its
 * worker killed (SIGKILL) mid-run: a new worker carries the run to its end, no finished step runs
 * again, and every target's command completes exactly once. Twice: a rolling window (a workflow per
 * target), killed when 100 targets have finished; and batches of 100 (each batch's targets in three
 * groups sharing a workflow each), killed when half the first batch has finished, its other half
 * running. Each command waits for its own go file before it notes itself, and the test gives the go
 * to the targets meant to finish only before the kill: the commands running at the kill had done
 * nothing yet (they run again, as an interrupted command does), none was between its note and its
 * result.
 */

type Target = { server_id: string; title: string; status: string; steps: Array<{ status: string; attempts: number }> };
type Ops = Awaited<ReturnType<BosunProcesses['launchApiAndWorker']>>['ops'];

const TARGETS = 200;
const ADDRESSES = Array.from({ length: 15 }, (_, i) => `127.0.90.${i + 1}`);
const WINDOW = 20;

describe('a 200-target run survives the death of its worker', () => {
  // 200 servers added and verified, a run of 200 targets read as it goes: more than a token's default 600 requests a minute.
  const bosun = new BosunProcesses({ ...externalServicesEnv('fleet-200'), RATE_LIMIT_PER_MINUTE: '100000' });
  const daemons: Sshd[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'bosun-fleet-200-'));
  // The sshd's login may be another user than the one running the tests.
  execFileSync('chmod', ['777', dir]);
  let ops: Ops;
  let worker: BosunProcess;
  let servers: Array<{ id: string; key: string }> = [];
  let keyOf = new Map<string, string>();
  beforeAll(async () => {
    await bosun.createToken('fleet-200');
    ({ worker, ops } = await bosun.launchApiAndWorker());
    for (let i = 0; i < Math.ceil(TARGETS / ADDRESSES.length); i += 1) daemons.push(await Sshd.startPrivate(ADDRESSES));
    const all = daemons.flatMap((sshd, d) => fleetOn(sshd.info, ADDRESSES, 'wide', 1 + d * ADDRESSES.length)).slice(0, TARGETS);
    // Ten at a time: each server is verified over SSH as it is added.
    const ids = await addFleet(ops, all, { atOnce: 10 });
    servers = all.map(({ host, sshd }, i) => ({ id: ids[i]!, key: endpoint(host, sshd.port) }));
    keyOf = new Map(servers.map((s) => [s.id, s.key]));
  }, 300_000);
  afterAll(async () => {
    await bosun.stop();
    await Promise.all(daemons.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Where a command is: its SSH endpoint, address and port (SSH_CONNECTION's third and fourth fields). */
  const here = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3,4 | tr " " _)';
  /** A run's command: waits for its go file (`<run>-go-<endpoint>`), then notes itself once in `<run>-ran-<endpoint>`. */
  const commandOf = (run: string) => `${here}; while [ ! -e ${dir}/${run}-go-$here ]; do sleep 0.1; done; echo x >> ${dir}/${run}-ran-$here`;
  const endpoint = (host: string, port: number) => `${host}_${port}`;
  const go = (run: string, keys: string[]) => keys.forEach((key) => writeFileSync(path.join(dir, `${run}-go-${key}`), ''));
  const ranCount = (run: string, key: string) => (existsSync(path.join(dir, `${run}-ran-${key}`)) ? readFileSync(path.join(dir, `${run}-ran-${key}`), 'utf8').split('\n').filter(Boolean).length : 0);

  /**
   * A run over the 200 servers: the go for `before` targets (in the run's order), the worker killed once
   * they have finished, a new worker, the go for the rest; then the run's end is checked.
   */
  async function killedMidRun(run: string, strategy: object, before: number) {
    const deployment = await ops.define({ name: run, targets: { server_ids: servers.map((s) => s.id) }, strategy, steps: [{ name: 'ship', command: commandOf(run) }] });
    const { run_id: runId } = await ops.trigger(deployment.id);
    const first = await eventually(async () => (await ops.getRun(deployment.id, runId)) as { targets: Target[] }, (r) => r.targets.length === TARGETS, 60_000);
    const order = first.targets.map((t) => keyOf.get(t.server_id)!);
    go(run, order.slice(0, before));
    await ops.waitForRun(deployment.id, runId, (r) => r.targets.filter((t: Target) => t.status === 'success').length >= before, 240_000);
    await worker.stop('SIGKILL');
    worker = await bosun.launch('worker');
    await worker.ready();
    go(run, order.slice(before));

    const ended = await ops.waitForRun(deployment.id, runId, runEnded, 300_000);
    expect(ended.status).toBe('success');
    expect(ended.summary).toMatchObject({ total: TARGETS, success: TARGETS });
    const finishedBefore = new Set(first.targets.slice(0, before).map((t) => t.server_id));
    const wrong: string[] = [];
    for (const target of ended.targets as Target[]) {
      const key = keyOf.get(target.server_id)!;
      if (ranCount(run, key) !== 1) wrong.push(`${target.title}: completed ${ranCount(run, key)} times, attempted ${target.steps[0]!.attempts}: ${JSON.stringify((await ops.getTarget(deployment.id, runId, target.server_id)).steps[0].output)}`);
      // The targets that had finished before the kill: none was attempted again.
      if (finishedBefore.has(target.server_id) && target.steps[0]!.attempts !== 1) wrong.push(`${target.title}: attempted ${target.steps[0]!.attempts} times`);
    }
    expect(wrong).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.startsWith(`${run}-ran-`))).toHaveLength(TARGETS);
  }

  test('a rolling window of 20, SIGKILL when 100 of 200 targets have finished: the run ends, each command completed once, nothing finished ran again', async () => {
    await killedMidRun('window', { max_concurrency: WINDOW }, 100);
  }, 600_000);

  test('batches of 100 in groups, SIGKILL when half the first batch has finished and the rest of it runs: the run ends, each command completed once, nothing finished ran again', async () => {
    await killedMidRun('batches', { batch_size: 100 }, 50);
  }, 600_000);
});
