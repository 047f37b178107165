import { Types } from 'mongoose';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import { ServerModel } from '../../src/domain/servers/model';
import { PipelineRunModel } from '../../src/domain/pipelines/model';
import { eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';

describe('a queued run whose workflow start never reached Temporal', () => {
  let bosun: Bosun;
  let ops: User;
  beforeAll(async () => {
    bosun = await startBosun({ queueSweepMs: 1000 });
    ops = await asUser(bosun, 'lost-wakes');
  });
  afterAll(() => bosun.stop());

  test('is started by the workers’ sweep', async () => {
    const serverId = await ops.addServer();
    const { id } = await ops.defineDeployment(serverId, [{ name: 'hello', command: 'echo swept' }], 'lost');
    // What a trigger stores before it answers 202; the API process then dies before its start goes out.
    const deployment = (await DeploymentModel.findById(id).lean())!;
    const server = (await ServerModel.findOneAndUpdate({ _id: serverId }, { $inc: { run_seq: 1 } }, { returnDocument: 'after' }).lean())!;
    const run = await DeploymentRunModel.create({
      organization_id: deployment.organization_id,
      deployment_id: deployment._id,
      server_id: deployment.server_id,
      triggered_by: 'lost-wake',
      token_id: new Types.ObjectId(),
      queue_seq: server.run_seq,
      steps: deployment.steps.map((s) => ({ ...s, status: 'pending' })),
    });

    const finished = await ops.waitForRun(id, run._id.toString(), (r) => r.status === 'success', 20_000);
    expect(finished.steps[0].output).toBe('swept\n');
  });

  test('a pipeline run stored whose workflow never started is started by the sweep, and runs its stage once', async () => {
    const serverId = await ops.addServer({ host: '127.0.0.2' });
    const { id, name } = await ops.defineDeployment(serverId, [{ name: 'hello', command: 'echo swept' }], 'lost-stage');
    const pipeline = (await ops.request('post', '/pipelines', { name: 'lost-pipeline', stages: [{ name: 'only', deployment: name }] })).body.data;
    const me = (await ops.request('get', '/me')).body.data.identity;
    // What a trigger stores before it starts the run's workflow; the API process then dies.
    const run = await PipelineRunModel.create({
      organization_id: (await DeploymentModel.findById(id).lean())!.organization_id,
      pipeline_id: pipeline.id,
      pipeline_name: pipeline.name,
      triggered_by: me.name,
      actor: { type: me.type, id: me.id, name: me.name, token_id: null },
      stages: [{ name: 'only', deployment_id: id, deployment_name: name, status: 'pending' }],
    });
    const path = `/pipelines/${pipeline.id}/runs/${run._id.toString()}`;
    const finished = await eventually(async () => (await ops.request('get', path)).body.data, (r) => r.status === 'success', 30_000);
    expect(finished.stages[0]).toMatchObject({ status: 'success', deployment_run_status: 'success' });
    expect((await ops.request('get', `/deployments/${id}/runs`)).body.meta.total).toBe(1);
  });
});
