import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { failOrphanedRuns } from '../../src/worker/reconcile';
import { WorkflowGateway } from '../../src/domain/temporal/client';
import { addVerifiedServer, bearer, conversationEnded, eventually, runEnded, startBosun, type Bosun } from '../support/bosun';

describe('a run whose workflow was terminated by hand in Temporal', () => {
  let bosun: Bosun;
  let token: string;
  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('orphans');
  });
  afterAll(() => bosun.stop());

  test('is finished as failed with the reason when workers reconcile, its steps closed as a failed run’s, and nothing is left running', async () => {
    const serverId = await addVerifiedServer(bosun, token);
    const id = (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'orphan', server_id: serverId, steps: [{ name: 'long', command: 'echo up; sleep 30' }, { name: 'next', command: 'true' }],
    })).body.data.id;
    const runId = (await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token))).body.run_id;
    const read = async () => (await bosun.api.get(`/api/v1/deployments/${id}/runs/${runId}`).set(bearer(token))).body.data;
    await eventually(read, (r) => r.steps[0].output.includes('up'));
    await bosun.temporal.workflow.getHandle(`deployment-run-${runId}`).terminate('operator pressed the button');

    expect(await failOrphanedRuns(new WorkflowGateway(bosun.temporal, 'unused', { verifyMaxAttempts: 1, healthIntervalSeconds: 60 }))).toBe(1);
    const run = await read();
    expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining('terminated in Temporal') });
    // Closed as its workflow closes a failed run: the step that was running failed, the rest skipped.
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'skipped']);
    expect(run.steps[0].completed_at).not.toBeNull();
    // Its deployment no longer shows a run in progress.
    expect((await bosun.api.get(`/api/v1/deployments/${id}`).set(bearer(token))).body.data.last_run_status).toBe('failed');
  });
});

describe('cancelled after its workflow was terminated by hand in Temporal (nothing else will close it)', () => {
  let bosun: Bosun;
  let token: string;
  let serverId: string;
  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('orphans');
    serverId = await addVerifiedServer(bosun, token);
  });
  afterAll(() => bosun.stop());

  test('a run ends cancelled, its open steps cancelled as its workflow would have, and its deployment shows it', async () => {
    const id = (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'orphan-cancel', server_id: serverId, steps: [{ name: 'long', command: 'echo up; sleep 30' }, { name: 'next', command: 'true' }],
    })).body.data.id;
    const runId = (await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token))).body.run_id;
    const read = async () => (await bosun.api.get(`/api/v1/deployments/${id}/runs/${runId}`).set(bearer(token))).body.data;
    await eventually(read, (r) => r.steps[0].output.includes('up'));
    await bosun.temporal.workflow.getHandle(`deployment-run-${runId}`).terminate('operator pressed the button');

    const cancelled = await bosun.api.post(`/api/v1/deployments/${id}/runs/${runId}/cancel`).set(bearer(token));
    expect(cancelled.status).toBe(202);
    const run = await eventually(read, runEnded);
    expect(run.status).toBe('cancelled');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(run.steps[0].completed_at).not.toBeNull();
    expect((await bosun.api.get(`/api/v1/deployments/${id}`).set(bearer(token))).body.data.last_run_status).toBe('cancelled');
  });

  test('a conversation ends cancelled, its open steps closed with the same note as its workflow writes', async () => {
    // A local port that accepts and never answers: the step's curl waits on it.
    const silent: Server = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as AddressInfo).port;
      const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: `check http://127.0.0.1:${port}/slow` });
      const id = started.body.data.id;
      const read = async () => (await bosun.api.get(`/api/v1/conversations/${id}`).set(bearer(token))).body.data;
      await eventually(read, (c) => c.steps[0]?.status === 'running');
      await bosun.temporal.workflow.getHandle(`conversation-${id}`).terminate('operator pressed the button');

      expect((await bosun.api.post(`/api/v1/conversations/${id}/cancel`).set(bearer(token))).status).toBe(202);
      const conversation = await eventually(read, conversationEnded);
      expect(conversation).toMatchObject({ status: 'cancelled', error: 'Cancelled' });
      expect(conversation.steps[0].status).toBe('failed');
      expect(conversation.steps[0].execution_log).toContain('--- Cancelled ---');
    } finally {
      silent.close();
    }
  });
});
