import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { connectSocket, type BosunSocket } from '../support/socket';
import { sharedFolder } from '../support/trees';

/*
 * The subscription's snapshot of a fleet run is the run as GET shows it: every target with its
 * batch, status and seq, and the summary counting them. Five "servers" are the test sshd on five
 * loopback addresses; each target's step waits for a file of its address, so the test decides
 * when each finishes.
 */

const ADDRESSES = [2, 3, 4, 5, 6].map((n) => `127.0.0.${n}`);
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

describe('subscribing to a fleet run', () => {
  let bosun: Bosun;
  let ops: User;
  let work: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    // With a Temporal UI address, so the snapshot must carry the run's link as GET does.
    bosun = await startBosun({ temporalUiUrl: 'http://temporal-ui.example:8233' });
    ops = await asUser(bosun, 'fleet-snapshot');
    for (const [i, host] of ADDRESSES.entries()) await ops.addServer({ host, title: `node-${i + 1}`, tags: ['snap'] });
    work = sharedFolder('bosun-fleet-snapshot-');
  }, 120_000);
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    ops?.close();
    await bosun?.stop();
    // Steps still waiting (a failed test) end when their folder is gone.
    rmSync(work, { recursive: true, force: true });
  });

  const snapshotOf = async (runId: string) => {
    const socket = await connectSocket(bosun.url, ops.token);
    sockets.push(socket);
    const answer = await socket.emitWithAck('subscribe', { run_id: runId });
    if (!answer.ok) throw new Error(answer.error.message);
    return answer.data as { seq: number; run: Record<string, unknown> & { seq: number } };
  };
  const release = (address: string) => writeFileSync(path.join(work, `go-${address}`), '');

  test('while it runs and after it ended, the snapshot has every target and the summary, equal to GET', async () => {
    const deployment = await ops.define({
      targets: { tags: ['snap'] },
      strategy: { batch_size: 2 },
      steps: [{ name: 'wait', command: `${HERE}; while [ -d ${work} ] && [ ! -e ${work}/go-$here ]; do sleep 0.1; done; echo "released $here"` }],
    });
    const { run_id: runId } = await ops.trigger(deployment.id);
    // The first batch's two steps are running, waiting for their files: nothing changes until the test says so.
    const running = await ops.waitForRun(
      deployment.id,
      runId,
      (r) => r.summary.running === 2 && r.targets.filter((t: { steps: Array<{ status: string }> }) => t.steps[0]!.status === 'running').length === 2,
    );
    expect(running.summary).toEqual({ total: 5, success: 0, failed: 0, running: 2, queued: 3, skipped: 0, cancelled: 0 });

    const live = await snapshotOf(runId);
    const rest = await ops.getRun(deployment.id, runId);
    expect(live.seq).toBe(rest.seq);
    // duration_seconds and running_seconds count on while it runs: the two reads may be a second apart.
    const { duration_seconds: liveDuration, running_seconds: liveRunning, ...liveRest } = live.run;
    const { duration_seconds: restDuration, running_seconds: restRunning, ...restRest } = rest;
    expect(liveRest).toEqual(restRest);
    expect(Math.abs((liveDuration as number) - restDuration)).toBeLessThanOrEqual(1);
    expect(Math.abs((liveRunning as number) - restRunning)).toBeLessThanOrEqual(1);
    expect((live.run.targets as unknown[]).length).toBe(5);
    expect(live.run.temporal_ui_url).toBe(`http://temporal-ui.example:8233/namespaces/default/workflows/deployment-run-${runId}`);

    for (const address of ADDRESSES) release(address);
    const ended = await ops.waitForRun(deployment.id, runId);
    expect(ended.summary).toEqual({ total: 5, success: 5, failed: 0, running: 0, queued: 0, skipped: 0, cancelled: 0 });
    const after = await snapshotOf(runId);
    expect(after.run).toEqual(ended);
    expect(after.seq).toBe(ended.seq);
  });
});
