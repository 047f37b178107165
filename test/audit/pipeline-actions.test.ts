import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';

type Json = any;

/*
 * A release's story in the audit trail, read back through GET /audit: a pipeline defined, changed
 * and deleted, triggered, its stage's gate approved in one run and rejected in another, the rejected
 * run retried and the retry cancelled — each under a name that says what happened to what.
 */

describe('pipelines in the audit trail', () => {
  let bosun: SharedBosun;
  let admin: User;
  let approver: User & { id: string };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = await asUser(bosun, 'pipeline-audit');
    approver = await addPerson(bosun, admin, 'Ana', 'approver');
    const server = await admin.addServer({ host: '127.0.0.8', title: 'pa-web' });
    await admin.defineDeployment(server, [{ name: 'ship', command: 'echo shipped' }], 'pa-ship');
  }, 120_000);
  afterAll(() => bosun.stop());

  const ok = async (res: Promise<{ status: number; body: Json }>, status: number) => {
    const answer = await res;
    if (answer.status !== status) throw new Error(`expected ${status}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const runOf = (pipelineId: string, runId: string, until: (run: Json) => boolean) =>
    eventually(async () => (await admin.request('get', `/pipelines/${pipelineId}/runs/${runId}`)).body.data, until, 60_000);
  const atGate = (run: Json) => run.status === 'awaiting_approval';

  test('define, change, trigger, approve, reject, retry, cancel and delete are each an entry with a sensible action and target', async () => {
    const started = new Date().toISOString();
    const pipeline = (await ok(admin.request('post', '/pipelines', { name: 'pa-release', stages: [{ name: 'prod', deployment: 'pa-ship', gate: { approvals: 1 } }] }), 201)).data;
    await ok(admin.request('patch', `/pipelines/${pipeline.id}`, { description: 'to production' }), 200);

    const approved = (await ok(admin.request('post', `/pipelines/${pipeline.id}/run`, {}), 202)).run_id;
    await runOf(pipeline.id, approved, atGate);
    await ok(approver.request('post', `/pipelines/${pipeline.id}/runs/${approved}/stages/prod/approve`, { comment: 'go' }), 200);
    expect((await runOf(pipeline.id, approved, (r) => r.status === 'success')).status).toBe('success');

    const rejected = (await ok(admin.request('post', `/pipelines/${pipeline.id}/run`, {}), 202)).run_id;
    await runOf(pipeline.id, rejected, atGate);
    await ok(approver.request('post', `/pipelines/${pipeline.id}/runs/${rejected}/stages/prod/reject`, { reason: 'not today' }), 200);
    await runOf(pipeline.id, rejected, (r) => r.status === 'failed');

    const retried = (await ok(admin.request('post', `/pipelines/${pipeline.id}/runs/${rejected}/retry`), 202)).run_id;
    await runOf(pipeline.id, retried, atGate);
    await ok(admin.request('post', `/pipelines/${pipeline.id}/runs/${retried}/cancel`), 202);
    await runOf(pipeline.id, retried, (r) => r.status === 'cancelled');
    expect((await admin.request('delete', `/pipelines/${pipeline.id}`)).status).toBe(204);

    const expected = 9;
    const entries = await eventually(
      async () => ((await admin.request('get', `/audit?action=pipeline.*&since=${started}&per_page=100`)).body.data as Json[]).filter((e) => e.outcome !== 'pending'),
      (list) => list.length >= expected,
      60_000,
    );
    const told = entries.map((e) => [e.action, e.target.kind, e.target.id, e.outcome]).sort((a, b) => `${a[0]}${a[2]}`.localeCompare(`${b[0]}${b[2]}`));
    expect(told).toEqual(
      [
        ['pipeline.create', 'pipeline', pipeline.id, 'ok'],
        ['pipeline.delete', 'pipeline', pipeline.id, 'ok'],
        ['pipeline.run.cancel', 'pipeline_run', retried, 'ok'],
        ['pipeline.run.retry', 'pipeline_run', rejected, 'ok'],
        ['pipeline.stage.approve', 'pipeline_run', approved, 'ok'],
        ['pipeline.stage.reject', 'pipeline_run', rejected, 'ok'],
        ['pipeline.trigger', 'pipeline', pipeline.id, 'ok'],
        ['pipeline.trigger', 'pipeline', pipeline.id, 'ok'],
        ['pipeline.update', 'pipeline', pipeline.id, 'ok'],
      ].sort((a, b) => `${a[0]}${a[2]}`.localeCompare(`${b[0]}${b[2]}`)),
    );
    const entry = (action: string, runId?: string) => entries.find((e) => e.action === action && (!runId || e.target.id === runId || e.details.created_id === runId))!;
    // A trigger and a retry name the run they started; a decision names its stage, and who decided.
    expect(entry('pipeline.trigger', approved).details).toMatchObject({ route: 'POST /api/v1/pipelines/:id/run', created_id: approved });
    expect(entry('pipeline.trigger', rejected).details.created_id).toBe(rejected);
    expect(entry('pipeline.run.retry').details).toMatchObject({ created_id: retried, params: { id: pipeline.id, runId: rejected } });
    expect(entry('pipeline.stage.approve')).toMatchObject({ actor: { type: 'person', id: approver.id }, details: { params: { stage: 'prod' } } });
    expect(entry('pipeline.stage.reject')).toMatchObject({ actor: { type: 'person', id: approver.id }, details: { params: { stage: 'prod' } } });
  }, 180_000);
});
