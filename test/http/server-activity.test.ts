import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer, conversationEnded } from '../support/http';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';

describe('a server’s activity: its runs, fleet runs and conversations, newest first', () => {
  let bosun: SharedBosun;
  let ops: User;
  beforeAll(async () => {
    bosun = await sharedBosun();
    ops = await asUser(bosun, 'activity', await bosun.token('activity', ['admin'], 'ops'));
  });
  afterAll(() => bosun.stop());

  test('lists what touched the server, with its own part in a fleet run, and nothing of other servers or organizations', async () => {
    const web = await ops.addServer({ host: '127.0.0.2', tags: ['web'] });
    const db = await ops.addServer({ host: '127.0.0.3', tags: ['db'] });
    const single = await ops.defineDeployment(web, [{ name: 'hello', command: 'echo hello' }], 'single');
    const singleRun = await ops.runToEnd(single.id);
    const fleet = await ops.define({ name: 'everywhere', targets: { server_ids: [web, db] }, steps: [{ name: 'hello', command: 'echo hello from the fleet' }] });
    const fleetRun = await ops.runToEnd(fleet.id);
    const conversation = await ops.converse(web, 'show uptime');
    expect(conversation.status).toBe('completed');
    const plan = (await bosun.api.post('/api/v1/migration-plans').set(bearer(ops.token)).send({ title: 'move', source_server_id: web, target_server_id: db })).body.data;
    const migration = (await bosun.api.post('/api/v1/conversations').set(bearer(ops.token)).send({ chatable_type: 'migration_plan', chatable_id: plan.id, message: 'show the hostname on both servers' })).body.data;
    await eventually(() => ops.getConversation(migration.id), conversationEnded, 60_000);
    // Another server's own run is not the web server's.
    await ops.runToEnd((await ops.defineDeployment(db, [{ name: 'db only', command: 'true' }], 'db-only')).id);

    const activity = await bosun.api.get(`/api/v1/servers/${web}/activity`).set(bearer(ops.token));
    expect(activity.status).toBe(200);
    const webTarget = fleetRun.targets.find((t: { server_id: string }) => t.server_id === web);
    expect(activity.body.data.map((a: { kind: string; id: string; title: string; fleet: boolean; role: string; status: string }) => [a.kind, a.id, a.title, a.fleet, a.role, a.status])).toEqual([
      ['conversation', migration.id, 'show the hostname on both servers', false, 'source', expect.any(String)],
      ['conversation', conversation.id, 'show uptime', false, 'server', 'completed'],
      ['run', fleetRun.id, 'everywhere', true, 'server', webTarget.status],
      ['run', singleRun.id, 'single', false, 'server', 'success'],
    ]);
    expect(activity.body.data[3]).toMatchObject({ deployment_id: single.id, by: 'API token: ops', error: null });

    const one = await bosun.api.get(`/api/v1/servers/${web}/activity?limit=1`).set(bearer(ops.token));
    expect(one.body.data.map((a: { id: string }) => a.id)).toEqual([migration.id]);
    const bad = await bosun.api.get(`/api/v1/servers/${web}/activity?limit=0`).set(bearer(ops.token));
    expect([bad.status, bad.body.error.code]).toEqual([422, 'validation_failed']);
    const stranger = await bosun.token('activity-strangers', ['read']);
    const hidden = await bosun.api.get(`/api/v1/servers/${web}/activity`).set(bearer(stranger));
    expect([hidden.status, hidden.body.error.code]).toEqual([404, 'not_found']);
  });
});
