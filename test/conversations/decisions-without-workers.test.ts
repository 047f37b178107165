import { Types } from 'mongoose';
import { ConversationModel } from '../../src/domain/conversations/model';
import { ServerModel } from '../../src/domain/servers/model';
import { bearer, startBosun, type Bosun } from '../support/bosun';
import { personToken, userWithToken } from '../support/client';

// Found by fuzzing: an approval waited for a worker to take the decision, so with every worker down the request hung.
describe('a decision on a step while no worker runs', () => {
  let bosun: Bosun;
  let token: string;

  beforeAll(async () => {
    bosun = await startBosun({ worker: false });
    token = await bosun.token('no-workers');
  });
  afterAll(() => bosun.stop());

  test('answers 503 within seconds and changes nothing', async () => {
    const server = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title: 'web', host: '127.0.0.1', port: 1, username: 'deploy', auth_method: 'password', password: 'pw-secret' });
    // What a worker's verification would have written: the server can take conversations.
    await ServerModel.updateOne({ _id: server.body.data.id }, { $set: { status: 'verified', host_key_fingerprint: 'SHA256:pinned' } });
    const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: server.body.data.id, message: 'show disk usage' });
    expect(started.status).toBe(201);
    // And what its planning would have written: a step waiting for approval.
    const conversation = await ConversationModel.findById(started.body.data.id).orFail();
    const stepId = new Types.ObjectId();
    await ConversationModel.updateOne(
      { _id: conversation._id },
      {
        $set: { status: 'awaiting_approval' },
        $push: { steps: { _id: stepId, message_id: conversation.messages[0]!._id, title: 'Disk usage', command: 'df -h', target: 'server', risk: 'read', approval: { decision: null }, created_at: new Date() } },
      },
    );

    // A person decides (a service account may not).
    const person = await personToken(userWithToken(bosun, token), 'Pat', 'operator');
    const t0 = Date.now();
    const approve = await bosun.api.post(`/api/v1/conversations/${conversation._id}/steps/${stepId}/approve`).set(bearer(person.token));
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(approve.status).toBe(503);
    expect(approve.body.error).toEqual({ code: 'service_unavailable', message: expect.stringContaining('No worker took the decision') });
    const after = await bosun.api.get(`/api/v1/conversations/${conversation._id}`).set(bearer(token));
    expect(after.body.data.steps[0]).toMatchObject({ status: 'pending', approval: { decision: null } });
  });
});
