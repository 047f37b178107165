import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

type Json = any;

/*
 * A pipeline run's events on the real stack: a channel subscribed to the pipeline events is told
 * when a run succeeds, when it fails (naming the failed stage), and when a stage's gate opens — each
 * with a link to the pipeline run's console page.
 */

describe('pipeline notification events', () => {
  let bosun: SharedBosun;
  let admin: User;
  let receiver: WebhookReceiver;
  const deployments: Record<'ok' | 'broken', string> = { ok: '', broken: '' };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'pipeline-events');
    receiver = await startReceiver();
    const server = await admin.addServer({ host: '127.0.0.5', title: 'pipe-events' });
    deployments.ok = (await admin.defineDeployment(server, [{ name: 'release', command: 'echo released' }], 'pe-ok')).id;
    deployments.broken = (await admin.defineDeployment(server, [{ name: 'migrate', command: 'echo "no database"; exit 3' }], 'pe-broken')).id;
    const channel = await admin.request('post', '/notification-channels', { name: 'releases', type: 'webhook', url: receiver.url, events: ['pipeline.succeeded', 'pipeline.failed', 'pipeline.awaiting_approval'] });
    expect(channel.status).toBe(201);
    receiver.secret = channel.body.data.secret;
  }, 120_000);
  afterAll(async () => {
    await receiver.stop();
    await bosun.stop();
  });

  const pipeline = async (name: string, stages: Json[]) => {
    const res = await admin.request('post', '/pipelines', { name, stages });
    if (res.status !== 201) throw new Error(`define a pipeline: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  };
  const trigger = async (pipelineId: string) => {
    const res = await admin.request('post', `/pipelines/${pipelineId}/run`, {});
    expect(res.status).toBe(202);
    return res.body.run_id as string;
  };
  const told = (type: string, runId: string) => eventually(async () => receiver.events(type).filter((r) => r.json.run?.id === runId), (found) => found.length > 0, 90_000);

  test('a pipeline run that succeeds is told once, with a link to its page', async () => {
    const id = await pipeline('pe-green', [
      { name: 'build', deployment: deployments.ok },
      { name: 'ship', deployment: deployments.ok, needs: ['build'] },
    ]);
    const runId = await trigger(id);
    const [event] = await told('pipeline.succeeded', runId);
    expect(event!.verified).toBe(true);
    expect(event!.json).toMatchObject({
      type: 'pipeline.succeeded',
      summary: 'Pipeline run of pe-green succeeded',
      pipeline: { id, name: 'pe-green' },
      run: { id: runId, status: 'success', error: null },
      console_url: `${bosun.url}/pipelines/${id}/runs/${runId}`,
    });
    expect((await admin.request('get', `/pipelines/${id}/runs/${runId}`)).body.data.status).toBe('success');
    expect(receiver.events('pipeline.failed').filter((r) => r.json.run?.id === runId)).toEqual([]);
  }, 120_000);

  test('a pipeline run whose stage fails is told as failed, naming the stage', async () => {
    const id = await pipeline('pe-red', [
      { name: 'build', deployment: deployments.ok },
      { name: 'migrate', deployment: deployments.broken, needs: ['build'] },
      { name: 'ship', deployment: deployments.ok, needs: ['migrate'] },
    ]);
    const runId = await trigger(id);
    const [event] = await told('pipeline.failed', runId);
    expect(event!.json.summary).toMatch(/^Pipeline run of pe-red failed: Stage "migrate" failed/);
    expect(event!.json.run).toMatchObject({ id: runId, status: 'failed', failed_stage: { name: 'migrate', deployment_name: 'pe-broken', deployment_run_id: expect.any(String) } });
    expect(event!.json.console_url).toBe(`${bosun.url}/pipelines/${id}/runs/${runId}`);
    expect(receiver.events('pipeline.succeeded').filter((r) => r.json.run?.id === runId)).toEqual([]);
  }, 120_000);

  test('a stage that reaches its gate is told as awaiting approval, naming the stage', async () => {
    const id = await pipeline('pe-gated', [
      { name: 'staging', deployment: deployments.ok },
      { name: 'production', deployment: deployments.ok, needs: ['staging'], gate: { approvals: 2, expires_in: '2h' } },
    ]);
    const runId = await trigger(id);
    const [event] = await told('pipeline.awaiting_approval', runId);
    expect(event!.json).toMatchObject({
      summary: 'Pipeline run of pe-gated is waiting for approval at stage production (2 approvals needed)',
      pipeline: { id, name: 'pe-gated' },
      run: { id: runId },
      stage: { name: 'production', deployment_name: 'pe-ok', approvals_required: 2, expires_at: expect.any(String) },
      console_url: `${bosun.url}/pipelines/${id}/runs/${runId}`,
    });
    const run = (await admin.request('get', `/pipelines/${id}/runs/${runId}`)).body.data;
    expect(run.stages.find((s: Json) => s.name === 'production').status).toBe('awaiting_approval');
    expect((await admin.request('post', `/pipelines/${id}/runs/${runId}/cancel`)).status).toBe(202);
    await eventually(async () => (await admin.request('get', `/pipelines/${id}/runs/${runId}`)).body.data.status, (status) => status === 'cancelled', 60_000);
    // A cancelled pipeline run is not told of; the gate was told once.
    expect(receiver.events('pipeline.awaiting_approval').filter((r) => r.json.run?.id === runId)).toHaveLength(1);
    expect(receiver.events().filter((r) => r.json.run?.id === runId && r.json.type !== 'pipeline.awaiting_approval')).toEqual([]);
  }, 120_000);
});
