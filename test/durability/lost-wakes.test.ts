import { Types } from 'mongoose';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import { ServerModel } from '../../src/domain/servers/model';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken } from '../support/client';

describe('a queued run whose workflow start never reached Temporal', () => {
  let bosun: Bosun;
  let token: string;
  beforeAll(async () => {
    bosun = await startBosun({ queueSweepMs: 1000 });
    token = await bosun.token('lost-wakes');
  });
  afterAll(() => bosun.stop());

  test('is started by the workers’ sweep', async () => {
    const serverId = await userWithToken(bosun, token).addServer();
    const id = (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'lost', server_id: serverId, steps: [{ name: 'hello', command: 'echo swept' }],
    })).body.data.id;
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

    const read = async () => (await bosun.api.get(`/api/v1/deployments/${id}/runs/${run._id}`).set(bearer(token))).body.data;
    const finished = await eventually(read, (r) => r.status === 'success', 20_000);
    expect(finished.steps[0].output).toBe('swept\n');
  });
});
