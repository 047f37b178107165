import { Types } from 'mongoose';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import { ServerModel } from '../../src/domain/servers/model';
import { startBosun, type Bosun } from '../support/bosun';
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
});
