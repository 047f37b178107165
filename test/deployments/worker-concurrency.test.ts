import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { temporal } from '@temporalio/proto';
import { eventually, startBosun, type Bosun, type BosunOptions } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { fleetTargetGroupWorkflowId } from '../../src/domain/contracts/workflow-ids';

/*
 * WORKER_MAX_CONCURRENT_STEPS=2 on the real stack: four "servers" are the test sshd on four loopback
 * addresses. Each step marks itself running, notes how many steps were running as it began, and
 * waits until the test lets it end: what runs at once is a state the test looks at, not a race it
 * times, and it holds however slow the machine is.
 */

const ADDRESSES = [2, 3, 4, 5].map((n) => `127.0.0.${n}`);
/** The address the step's SSH connection came in on. */
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

/** A worker that runs two steps at once, with four servers and a folder its steps and the test share. */
function smallWorker(org: string, options: BosunOptions) {
  const world = { bosun: undefined as unknown as Bosun, ops: undefined as unknown as User, servers: [] as string[], work: '' };
  beforeAll(async () => {
    world.bosun = await startBosun({ maxConcurrentSteps: 2, ...options });
    world.ops = await asUser(world.bosun, org);
    for (const [i, host] of ADDRESSES.entries()) world.servers.push(await world.ops.addServer({ host, title: `${org}-${i + 1}` }));
    world.work = mkdtempSync(path.join(tmpdir(), 'bosun-concurrency-'));
    execFileSync('chmod', ['777', world.work]);
  }, 120_000);
  afterAll(async () => {
    world.ops.close();
    await world.bosun.stop();
    rmSync(world.work, { recursive: true, force: true });
  });
  return world;
}

/** Runs once per target: counts its runs, is `running-<address>` while it runs, ends once `go-<address>` exists. */
const heldStep = (work: string) => ({
  name: 'held',
  command: [
    HERE,
    `echo x >> ${work}/ran-$here`,
    `touch ${work}/running-$here`,
    // Itself included: the steps running as this one began.
    `ls ${work} | grep -c '^running-' > ${work}/seen-$here`,
    // Its folder gone (the test ended without releasing it): it ends too, leaving nothing behind.
    `until [ -e ${work}/go-$here ] || [ ! -d ${work} ]; do sleep 0.05; done`,
    `rm ${work}/running-$here`,
    'echo done',
  ].join('; '),
});

const running = (work: string) => readdirSync(work).filter((f) => f.startsWith('running-')).map((f) => f.slice('running-'.length)).sort();
const release = (work: string, addresses: string[]) => addresses.forEach((address) => writeFileSync(`${work}/go-${address}`, ''));
const count = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
const seenAtStart = (work: string, address: string) => Number(readFileSync(`${work}/seen-${address}`, 'utf8'));
/** Waits until the run shows each target's step (by its address) in these statuses; fails with what it shows. */
async function stepsBecome(ops: User, deploymentId: string, runId: string, statuses: Record<string, string>) {
  await eventually(
    async () => Object.fromEntries((await ops.getRun(deploymentId, runId)).targets.map((t: { host: string; steps: Array<{ status: string }> }) => [t.host, t.steps[0]!.status])),
    (now) => isDeepStrictEqual(now, statuses),
  );
}
const { PENDING_ACTIVITY_STATE_STARTED } = temporal.api.enums.v1.PendingActivityState;

describe('quick steps: a worker that runs two at once', () => {
  // Held past the usual 2 s, a step stays a quick one (a local activity holding its place) until released;
  // 45 s is under the local activity's 1-minute limit and over the test's 30 s waits.
  const world = smallWorker('small-worker', { stepHandoffAfterMs: 45_000 });

  test('runs a batch of four targets two at a time: two running, two waiting, until those two end', async () => {
    const { ops, servers, work } = world;
    const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 4 }, steps: [heldStep(work)] });
    const { run_id: runId } = await ops.trigger(deployment.id);

    // Two steps begin although the fleet's workflow and the other targets have workflow tasks too.
    const first = await eventually(async () => running(work), (now) => now.length >= 2);
    expect(first).toHaveLength(2);
    const waiting = ADDRESSES.filter((address) => !first.includes(address));
    // Nothing ends while they are held: the run stays so.
    await stepsBecome(ops, deployment.id, runId, Object.fromEntries([...first.map((a) => [a, 'running']), ...waiting.map((a) => [a, 'pending'])]));
    expect(running(work)).toEqual(first);

    release(work, first);
    expect(await eventually(async () => running(work), (now) => now.length >= 2 && !now.some((a) => first.includes(a)))).toEqual(waiting);
    await stepsBecome(ops, deployment.id, runId, Object.fromEntries([...first.map((a) => [a, 'success']), ...waiting.map((a) => [a, 'running'])]));

    release(work, waiting);
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run.summary).toMatchObject({ total: 4, success: 4 });
    for (const address of ADDRESSES) {
      expect(count(`${work}/ran-${address}`)).toBe(1);
      // Never a third: each began with at most one other running.
      expect(seenAtStart(work, address)).toBeLessThanOrEqual(2);
    }
  }, 120_000);
});

describe('long steps: handed off after 2 s, they are not limited', () => {
  const world = smallWorker('long-steps', {});

  /** The targets whose command is followed by `awaitStep`, started on the worker's own task queue (the batch's targets share one workflow). */
  async function followed(runId: string) {
    const { raw } = await world.bosun.temporal.workflow.getHandle(fleetTargetGroupWorkflowId(runId, 1, 1)).describe();
    return (raw.pendingActivities ?? []).filter((a) => a.activityType?.name === 'awaitStep' && a.state === PENDING_ACTIVITY_STATE_STARTED).length;
  }

  test('all four commands of a batch run at once on a two-step worker, each followed to its end and run once', async () => {
    const { ops, servers, work } = world;
    const deployment = await ops.define({ targets: { server_ids: servers }, strategy: { batch_size: 4 }, steps: [heldStep(work)] });
    const { run_id: runId } = await ops.trigger(deployment.id);

    // Each held step is handed off and frees its place: the next one begins.
    expect(await eventually(async () => running(work), (now) => now.length === 4)).toEqual(ADDRESSES);
    // Each handed-off command is followed at once; one left waiting past 15 s would be run again.
    await eventually(() => followed(runId), (n) => n === 4);

    release(work, ADDRESSES);
    const run = await ops.waitForRun(deployment.id, runId);
    expect(run.summary).toMatchObject({ total: 4, success: 4 });
    for (const address of ADDRESSES) expect(count(`${work}/ran-${address}`)).toBe(1);
    expect(Math.max(...ADDRESSES.map((address) => seenAtStart(work, address)))).toBe(4);
  }, 120_000);
});
