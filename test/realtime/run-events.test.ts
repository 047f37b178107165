import { addVerifiedServer, bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { connectSocket, watchRun, type BosunSocket } from '../support/socket';

describe('live run progress over Socket.IO', () => {
  let bosun: Bosun;
  let token: string;
  let deploymentId: string;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('live');
    const serverId = await addVerifiedServer(bosun, token);
    const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'ticker',
      server_id: serverId,
      steps: [
        { name: 'wait', command: 'sleep 0.5' },
        { name: 'tick', command: 'for i in 1 2 3 4 5; do echo tick-$i; sleep 0.25; done' },
        { name: 'done', command: 'echo finished' },
      ],
    });
    deploymentId = created.body.data.id;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
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
    const socket = await connect(token);
    const trigger = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
    const runId = trigger.body.run_id as string;
    const watch = await watchRun(socket, runId);
    await eventually(async () => watch.events.at(-1)?.status, (s) => s === 'success', 30_000);

    const seqs = watch.events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => watch.snapshotSeq + 1 + i));

    // Output arrives while the step runs, in several chunks, before the step completes.
    const tickChunks = watch.events.filter((e) => e.output?.step_name === 'tick');
    expect(tickChunks.length).toBeGreaterThan(1);
    const tickDone = watch.events.findIndex((e) => e.steps[1]!.status === 'success');
    expect(watch.events.findIndex((e) => e.output?.data.includes('tick-1'))).toBeLessThan(tickDone);

    // Snapshot output plus the streamed chunks rebuild exactly what GET returns.
    const run = (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${runId}`).set(bearer(token))).body.data;
    run.steps.forEach((step: { output: string }, index: number) => {
      const streamed = watch.snapshot.steps[index]!.output + watch.events.filter((e) => e.output?.step === index).map((e) => e.output!.data).join('');
      expect(streamed).toBe(step.output);
    });
    expect(run.steps[1].output).toBe('tick-1\ntick-2\ntick-3\ntick-4\ntick-5\n');
    const statuses = watch.events.map((e) => e.steps[1]!.status);
    expect(statuses).toEqual(expect.arrayContaining(['running', 'success']));
  });

  test('another organization’s run cannot be subscribed to, not even for a moment, however often it tries', async () => {
    const trigger = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
    const stranger = await connect(await bosun.token('live-stranger'));
    let leaked = 0;
    stranger.on('DeploymentRunUpdated', () => (leaked += 1));
    await expect(watchRun(stranger, 'not-an-id')).rejects.toMatchObject({ code: 'not_found' });
    const read = async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data.status;
    while ((await read()) !== 'success') {
      const answer = await stranger.emitWithAck('subscribe', { run_id: trigger.body.run_id });
      expect(answer).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    expect(leaked).toBe(0);
  });

  test('identical consecutive chunks each arrive, with offsets that add up', async () => {
    const socket = await connect(token);
    const serverId = (await bosun.api.get(`/api/v1/deployments/${deploymentId}`).set(bearer(token))).body.data.server_id;
    const repeat = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'repeat', server_id: serverId, steps: [{ name: 'same', command: 'for i in 1 2 3 4 5; do echo same; sleep 0.3; done' }],
    });
    const runId = (await bosun.api.post(`/api/v1/deployments/${repeat.body.data.id}/run`).set(bearer(token))).body.run_id;
    const watch = await watchRun(socket, runId);
    await eventually(async () => watch.events.at(-1)?.status, (s) => s === 'success', 30_000);
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
