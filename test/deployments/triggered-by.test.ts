import { Types } from 'mongoose';
import { startBosun, type Bosun } from '../support/bosun';
import { addPerson, asUser, type User } from '../support/client';
import { DeploymentModel, DeploymentRunModel } from '../../src/domain/deployments/model';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';

/*
 * Who triggered a run, as every client reads it. A request with an API token names that token,
 * whoever's it is: `triggered_by` is "API token: <token name>" (the seed's form), with the identity
 * beside it in `actor`. A console session reads as its person; runs stored by older versions read
 * the same way. (A schedule's tick: test/schedules; an agent through the MCP door: test/agents.)
 */

type Json = any;

describe('who triggered a run', () => {
  let bosun: Bosun;
  let admin: User;
  let alice: User & { id: string };
  let serverId: string;
  let deploymentId: string;

  beforeAll(async () => {
    bosun = await startBosun();
    admin = await asUser(bosun, 'triggered-by', await bosun.token('triggered-by', ['admin'], 'release-ci'));
    alice = await addPerson(bosun, admin, 'Alice', 'deployer');
    serverId = await admin.addServer({ title: 'web-1', tags: ['fleet'] });
    deploymentId = (await admin.defineDeployment(serverId, [{ name: 'hello', command: 'echo hello' }])).id;
  }, 120_000);
  afterAll(async () => {
    alice?.close();
    await bosun.stop();
  });

  const activityOf = async (id: string) => ((await admin.request('get', `/servers/${serverId}/activity`)).body.data as Json[]).find((item) => item.id === id);

  test('a person’s API token: "API token: <its name>" on the run, the run list, the server’s activity and the run’s workflow; the person beside it', async () => {
    const run = await alice.runToEnd(deploymentId);
    expect(run).toMatchObject({
      status: 'success',
      triggered_by: 'API token: alice-token',
      actor: { type: 'person', id: alice.id, name: 'Alice', token_id: expect.stringMatching(/^[0-9a-f]{24}$/) },
      trigger: { type: 'person', name: 'Alice' },
    });
    const listed = ((await admin.request('get', `/deployments/${deploymentId}/runs`)).body.data as Json[]).find((r) => r.id === run.id);
    expect(listed).toMatchObject({ triggered_by: 'API token: alice-token', actor: { name: 'Alice' } });
    expect(await activityOf(run.id)).toMatchObject({ kind: 'run', by: 'API token: alice-token' });
    const described = await bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(run.id)).describe();
    expect(described.memo).toMatchObject({ triggered_by: 'API token: alice-token' });
    expect(await described.staticDetails()).toContain('**Triggered by** API token: alice-token');
  });

  test('a conversation started with a token: created_by "API token: <its name>", the identity beside it', async () => {
    const started = await alice.startConversation(serverId, 'say hello', { commands: ['echo hello'] });
    const conversation = await alice.waitForConversation(started.id);
    expect(conversation).toMatchObject({ status: 'completed', created_by: 'API token: alice-token', actor: { type: 'person', id: alice.id, name: 'Alice' } });
    expect(await activityOf(started.id)).toMatchObject({ kind: 'conversation', by: 'API token: alice-token' });
  });

  test('a console session reads as its person, though it signed in with a token: runs and conversations alike', async () => {
    const signedIn = await bosun.api.post('/api/v1/session').send({ token: alice.token });
    expect(signedIn.status).toBe(201);
    const cookie = String((signedIn.headers['set-cookie'] as unknown as string[])[0]).split(';')[0]!;
    const asConsole = (path: string, body: object = {}) => bosun.api.post(`/api/v1${path}`).set('Cookie', cookie).set('X-CSRF-Token', signedIn.body.data.csrf_token).send(body);

    const triggered = await asConsole(`/deployments/${deploymentId}/run`);
    expect(triggered.status).toBe(202);
    const run = await admin.waitForRun(deploymentId, triggered.body.run_id);
    expect(run).toMatchObject({ status: 'success', triggered_by: 'Alice (person)', actor: { type: 'person', name: 'Alice', token_id: expect.any(String) } });
    expect(await activityOf(run.id)).toMatchObject({ by: 'Alice (person)' });

    const started = await asConsole('/conversations', { chatable_type: 'server', chatable_id: serverId, message: 'say hello', commands: ['echo hello'] });
    expect(started.status).toBe(201);
    const conversation = await admin.waitForConversation(started.body.data.id);
    expect(conversation).toMatchObject({ status: 'completed', created_by: 'Alice (person)', actor: { name: 'Alice' } });
  });

  test('a rollback asked with another token reads as that token, not the run’s', async () => {
    const fleet = await admin.define({
      targets: { tags: ['fleet'] },
      steps: [{ name: 'release', command: 'echo released; exit 3' }],
      rollback: { automatic: false, steps: [{ name: 'restore', command: 'echo restored' }] },
    });
    const run = await admin.runToEnd(fleet.id);
    expect(run).toMatchObject({ status: 'failed', triggered_by: 'API token: release-ci' });
    expect((await alice.request('post', `/deployments/${fleet.id}/runs/${run.id}/rollback`, { reason: 'web-1 is down' })).status).toBe(202);
    const rolled = await admin.waitForRun(fleet.id, run.id, (r) => r.rollback?.status === 'success');
    const rollback = await admin.getRun(fleet.id, rolled.targets[0].rollback.run_id);
    expect(rollback).toMatchObject({ status: 'success', triggered_by: 'API token: alice-token', actor: { name: 'Alice' } });
    expect(await activityOf(rollback.id)).toMatchObject({ by: 'API token: alice-token' });
  });

  test('runs stored by older versions read the same way: by their token, or by the person who signed in without one', async () => {
    const tokenId = new Types.ObjectId();
    const { organization_id } = (await DeploymentModel.findById(deploymentId, { organization_id: 1 }).lean())!;
    // As each version wrote a finished one-server run: before identities (a token's name alone), then with its actor.
    const stored = async (fields: Record<string, unknown>) => {
      const _id = new Types.ObjectId();
      const now = new Date();
      await DeploymentRunModel.collection.insertOne({
        _id,
        organization_id,
        deployment_id: new Types.ObjectId(deploymentId),
        server_id: new Types.ObjectId(serverId),
        status: 'success',
        parameters: [],
        steps: [{ name: 'hello', command: 'echo hello', status: 'success', output: 'hello\n', exit_code: 0 }],
        seq: 3,
        createdAt: now,
        updatedAt: now,
        started_at: now,
        completed_at: now,
        ...fields,
      });
      return admin.getRun(deploymentId, _id.toString());
    };
    expect(await stored({ triggered_by: 'ci', token_id: tokenId })).toMatchObject({ triggered_by: 'API token: ci', actor: null, trigger: { type: 'token', name: 'ci' } });
    const account = { type: 'service_account', id: new Types.ObjectId(), name: 'ci-web', token_id: tokenId };
    expect(await stored({ triggered_by: 'ci-web', token_id: tokenId, actor: account })).toMatchObject({ triggered_by: 'API token: ci-web', actor: { name: 'ci-web', token_id: tokenId.toString() } });
    const olga = { type: 'person', id: new Types.ObjectId(), name: 'Olga', token_id: null };
    expect(await stored({ triggered_by: 'Olga (person)', token_id: null, actor: olga })).toMatchObject({ triggered_by: 'Olga (person)', actor: { name: 'Olga', token_id: null } });
  });
});
