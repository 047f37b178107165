import { failOrphanedRuns } from '../../src/worker/reconcile';
import { WorkflowGateway } from '../../src/domain/temporal/client';
import { addVerifiedServer, bearer, eventually, startBosun, type Bosun } from '../support/bosun';

describe('a run whose workflow was terminated by hand in Temporal', () => {
  let bosun: Bosun;
  let token: string;
  beforeAll(async () => {
    bosun = await startBosun();
    token = await bosun.token('orphans');
  });
  afterAll(() => bosun.stop());

  test('is finished as failed with the reason when workers reconcile, and nothing is left running', async () => {
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
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
  });
});
