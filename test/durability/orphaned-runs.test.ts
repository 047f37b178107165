import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { failOrphanedRuns } from '../../src/worker/reconcile';
import { failOrphanedPipelineRuns } from '../../src/worker/pipeline-reconcile';
import { WorkflowGateway } from '../../src/domain/temporal/client';
import { eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';

describe('a run whose workflow was terminated by hand in Temporal', () => {
  let bosun: Bosun;
  let ops: User;
  beforeAll(async () => {
    bosun = await startBosun();
    ops = await asUser(bosun, 'orphans');
  });
  afterAll(() => bosun.stop());

  test('is finished as failed with the reason when workers reconcile, its steps closed as a failed run’s, and nothing is left running', async () => {
    const serverId = await ops.addServer();
    const { id } = await ops.defineDeployment(serverId, [{ name: 'long', command: 'echo up; sleep 30' }, { name: 'next', command: 'true' }]);
    const { run_id: runId } = await ops.trigger(id);
    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('up'));
    await bosun.temporal.workflow.getHandle(`deployment-run-${runId}`).terminate('operator pressed the button');

    expect(await failOrphanedRuns(new WorkflowGateway(bosun.temporal, 'unused', { verifyMaxAttempts: 1, healthIntervalSeconds: 60 }))).toBe(1);
    const run = await ops.getRun(id, runId);
    expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining('terminated in Temporal') });
    // Closed as its workflow closes a failed run: the step that was running failed, the rest skipped.
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'skipped']);
    expect(run.steps[0].completed_at).not.toBeNull();
    // Its deployment no longer shows a run in progress.
    expect((await ops.getDeployment(id)).last_run_status).toBe('failed');
    // A change Bosun made by itself: in the audit trail, as the system's.
    const [entry] = await eventually(async () => (await ops.request('get', '/audit?action=run.fail_orphaned')).body.data as Array<Record<string, any>>, (list) => list.length === 1);
    expect(entry).toMatchObject({ actor: { type: 'system', name: 'start-up reconcile' }, target: { kind: 'run', id: runId }, outcome: 'ok' });
  });
});

describe('a pipeline run whose workflow was terminated by hand in Temporal', () => {
  let bosun: Bosun;
  let ops: User;
  beforeAll(async () => {
    bosun = await startBosun();
    ops = await asUser(bosun, 'pipeline-orphans');
  });
  afterAll(() => bosun.stop());

  test('is finished as failed with the reason when workers reconcile, its stages not begun cancelled', async () => {
    const serverId = await ops.addServer();
    const { name } = await ops.defineDeployment(serverId, [{ name: 'quick', command: 'true' }]);
    const pipeline = (await ops.request('post', '/pipelines', { name: 'orphaned', stages: [{ name: 'gated', deployment: name, gate: { approvals: 1 } }, { name: 'after', deployment: name, needs: ['gated'] }] })).body.data;
    const runId = (await ops.request('post', `/pipelines/${pipeline.id}/run`, {})).body.run_id as string;
    const path = `/pipelines/${pipeline.id}/runs/${runId}`;
    await eventually(async () => (await ops.request('get', path)).body.data.status, (status) => status === 'awaiting_approval');
    await bosun.temporal.workflow.getHandle(`pipeline-run-${runId}`).terminate('operator pressed the button');

    expect(await failOrphanedPipelineRuns(new WorkflowGateway(bosun.temporal, 'unused', { verifyMaxAttempts: 1, healthIntervalSeconds: 60 }))).toBe(1);
    const run = (await ops.request('get', path)).body.data;
    expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining('terminated in Temporal') });
    expect(run.stages.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
  });
});

describe('cancelled after its workflow was terminated by hand in Temporal (nothing else will close it)', () => {
  let bosun: Bosun;
  let ops: User;
  let serverId: string;
  beforeAll(async () => {
    bosun = await startBosun();
    ops = await asUser(bosun, 'orphans');
    serverId = await ops.addServer();
  });
  afterAll(() => bosun.stop());

  test('a run ends cancelled, its open steps cancelled as its workflow would have, and its deployment shows it', async () => {
    const { id } = await ops.defineDeployment(serverId, [{ name: 'long', command: 'echo up; sleep 30' }, { name: 'next', command: 'true' }]);
    const { run_id: runId } = await ops.trigger(id);
    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('up'));
    await bosun.temporal.workflow.getHandle(`deployment-run-${runId}`).terminate('operator pressed the button');

    await ops.cancelRun(id, runId);
    const run = await ops.waitForRun(id, runId);
    expect(run.status).toBe('cancelled');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(run.steps[0].completed_at).not.toBeNull();
    expect((await ops.getDeployment(id)).last_run_status).toBe('cancelled');
  });

  test('a conversation ends cancelled, its open steps closed with the same note as its workflow writes', async () => {
    // A local port that accepts and never answers: the step's curl waits on it.
    const silent: Server = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as AddressInfo).port;
      const { id } = await ops.startConversation(serverId, `check http://127.0.0.1:${port}/slow`);
      await ops.waitForConversation(id, (c) => c.steps[0]?.status === 'running');
      await bosun.temporal.workflow.getHandle(`conversation-${id}`).terminate('operator pressed the button');

      await ops.cancelConversation(id);
      const conversation = await ops.waitForConversation(id);
      expect(conversation).toMatchObject({ status: 'cancelled', error: 'Cancelled' });
      expect(conversation.steps[0].status).toBe('failed');
      expect(conversation.steps[0].execution_log).toContain('--- Cancelled ---');
    } finally {
      silent.close();
    }
  });
});
