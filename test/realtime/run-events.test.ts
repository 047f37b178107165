import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';
import { connectSocket, watchRun, type BosunSocket } from '../support/socket';

describe('live run progress over Socket.IO', () => {
  let bosun: SharedBosun;
  let alice: User;
  let serverId: string;
  let deploymentId: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await sharedBosun();
    alice = await asUser(bosun, 'live');
    serverId = await alice.addServer();
    deploymentId = (await alice.defineDeployment(serverId, [
      { name: 'wait', command: 'sleep 0.5' },
      { name: 'tick', command: 'for i in 1 2 3 4 5; do echo tick-$i; sleep 0.25; done' },
      { name: 'done', command: 'echo finished' },
    ])).id;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    alice.close();
    await bosun.stop();
  });

  const connect = async (t: string | undefined) => {
    const socket = await connectSocket(bosun.url, t);
    sockets.push(socket);
    return socket;
  };

  test('a bad or missing token is refused at the handshake', async () => {
    await expect(connectSocket(bosun.url, 'bsn_wrongwrongwrongwrongwrongwrongwrongwrong')).rejects.toMatchObject({ message: 'unauthorized' });
    await expect(connectSocket(bosun.url, undefined)).rejects.toMatchObject({ message: 'unauthorized' });
  });

  test('a subscriber sees every change in order with no gaps, output as it is produced, the same as GET', async () => {
    const { run_id: runId } = await alice.trigger(deploymentId);
    const watch = await alice.subscribe(runId);
    await watch.until((e) => e.status === 'success', 30_000);

    const seqs = watch.events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => watch.snapshotSeq + 1 + i));

    // Output arrives while the step runs, in several chunks, before the step completes.
    const tickChunks = watch.events.filter((e) => e.output?.step_name === 'tick');
    expect(tickChunks.length).toBeGreaterThan(1);
    const tickDone = watch.events.findIndex((e) => e.steps[1]!.status === 'success');
    expect(watch.events.findIndex((e) => e.output?.data.includes('tick-1'))).toBeLessThan(tickDone);

    // Snapshot output plus the streamed chunks rebuild exactly what GET returns.
    const run = await alice.getRun(deploymentId, runId);
    run.steps.forEach((step: { output: string }, index: number) => {
      const streamed = watch.snapshot.steps[index]!.output + watch.events.filter((e) => e.output?.step === index).map((e) => e.output!.data).join('');
      expect(streamed).toBe(step.output);
    });
    expect(run.steps[1].output).toBe('tick-1\ntick-2\ntick-3\ntick-4\ntick-5\n');
    const statuses = watch.events.map((e) => e.steps[1]!.status);
    expect(statuses).toEqual(expect.arrayContaining(['running', 'success']));

    // The run ends with its last step's result, in one change: no event shows every step done while the run still runs.
    const lastDone = watch.events.findIndex((e) => e.steps[2]!.status === 'success');
    expect(watch.events[lastDone]).toMatchObject({ status: 'success', output: { step_name: 'done', data: 'finished\n' } });
    expect(lastDone).toBe(watch.events.length - 1);
  });

  test('another organization’s run cannot be subscribed to, not even for a moment, however often it tries', async () => {
    const { run_id: runId } = await alice.trigger(deploymentId);
    const stranger = await connect(await bosun.token('live-stranger'));
    let leaked = 0;
    stranger.on('DeploymentRunUpdated', () => (leaked += 1));
    await expect(watchRun(stranger, 'not-an-id')).rejects.toMatchObject({ code: 'not_found' });
    while ((await alice.getRun(deploymentId, runId)).status !== 'success') {
      const answer = await stranger.emitWithAck('subscribe', { run_id: runId });
      expect(answer).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    expect(leaked).toBe(0);
  });

  test('identical consecutive chunks each arrive, with offsets that add up', async () => {
    const repeat = await alice.defineDeployment(serverId, [{ name: 'same', command: 'for i in 1 2 3 4 5; do echo same; sleep 0.3; done' }]);
    const watch = await alice.subscribe((await alice.trigger(repeat.id)).run_id);
    await watch.until((e) => e.status === 'success', 30_000);
    const chunks = watch.events.filter((e) => e.output).map((e) => e.output!);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    let offset = watch.snapshot.steps[0]!.output.length;
    for (const chunk of chunks) {
      expect(chunk.offset).toBe(offset);
      offset += chunk.data.length;
    }
    expect(watch.snapshot.steps[0]!.output + chunks.map((c) => c.data).join('')).toBe('same\n'.repeat(5));
  });
});
