import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { asUser, type User } from '../support/client';

/*
 * Servers carry tags; lists filter by them (all given must match) and by status; a deployment's
 * targets select servers by them when a run is triggered.
 */

let bosun: SharedBosun;
let ops: User;
let other: User;

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'tagged');
  other = await asUser(bosun, 'someone-else');
});
afterAll(() => bosun.stop());

const post = (user: User, body: object) => bosun.api.post('/api/v1/servers').set('Authorization', `Bearer ${user.token}`).send(body);
const base = { host: '127.0.0.9', port: 22, username: 'deploy', auth_method: 'password', password: 'pw' };

describe('server tags', () => {
  test('invalid tags are refused with what is wrong, and nothing is created', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [['Web'], /lowercase/],
      [['-web'], /starting with a letter or digit/],
      [['web eu'], /lowercase/],
      [['a'.repeat(64)], /at most 63 characters/],
      [Array.from({ length: 21 }, (_, i) => `t${i}`), /at most 20 tags/],
      ['web', /array/i],
    ];
    const before = (await ops.listServers()).meta.total;
    for (const [tags, message] of cases) {
      const res = await post(ops, { ...base, title: 'bad', tags });
      expect([res.status, res.body.error.code]).toEqual([422, 'validation_failed']);
      expect(JSON.stringify(res.body.error.details)).toMatch(message);
    }
    expect((await ops.listServers()).meta.total).toBe(before);
  });

  test('tags on creation and by PATCH; lists filter by every given tag and by status; other organizations see 404', async () => {
    const web1 = await ops.addServer({ host: '127.0.0.2', title: 'web-1', tags: ['web', 'eu', 'web'] });
    const web2 = await ops.addServer({ host: '127.0.0.3', title: 'web-2', tags: ['web', 'us'] });
    const db1 = await ops.addServer({ host: '127.0.0.4', title: 'db-1' });
    expect((await ops.getServer(web1)).tags).toEqual(['web', 'eu']);
    expect((await ops.getServer(db1)).tags).toEqual([]);

    const patched = await ops.patchServer(db1, { title: 'db-primary', tags: ['db', 'eu'] });
    expect(patched).toMatchObject({ id: db1, title: 'db-primary', tags: ['db', 'eu'], status: 'verified' });

    const titles = async (query: string) => (await ops.listServers(query)).data.map((s: { title: string }) => s.title).sort();
    expect(await titles('tag=web')).toEqual(['web-1', 'web-2']);
    expect(await titles('tag=web&tag=eu')).toEqual(['web-1']);
    expect(await titles('tag=eu')).toEqual(['db-primary', 'web-1']);
    expect(await titles('tag=nothing')).toEqual([]);
    expect(await titles('status=verified&tag=us')).toEqual(['web-2']);
    expect(await titles('status=offline')).toEqual([]);
    expect((await ops.listServers('tag=web&per_page=1')).meta).toMatchObject({ total: 2, per_page: 1, last_page: 2 });

    for (const query of ['tag=Web', 'status=sleeping']) {
      const res = await bosun.api.get(`/api/v1/servers?${query}`).set('Authorization', `Bearer ${ops.token}`);
      expect([res.status, res.body.error.code]).toEqual([422, 'validation_failed']);
    }
    for (const body of [{}, { tags: ['OK'] }, { host: '10.0.0.1' }]) {
      const res = await bosun.api.patch(`/api/v1/servers/${web2}`).set('Authorization', `Bearer ${ops.token}`).send(body);
      expect([res.status, res.body.error.code]).toEqual([422, 'validation_failed']);
    }
    expect((await ops.getServer(web2)).tags).toEqual(['web', 'us']);

    const foreign = await bosun.api.patch(`/api/v1/servers/${web2}`).set('Authorization', `Bearer ${other.token}`).send({ tags: ['mine'] });
    expect(foreign.status).toBe(404);
    expect((await other.listServers('tag=web')).data).toEqual([]);
  });

  test('a deployment targeting tags runs on the servers having all of them when triggered: a server tagged later is in the next run', async () => {
    const a = await ops.addServer({ host: '127.0.0.5', title: 'api-1', tags: ['api', 'prod'] });
    const b = await ops.addServer({ host: '127.0.0.6', title: 'api-2', tags: ['api'] });
    const deployment = await ops.define({ targets: { tags: ['api', 'prod'] }, steps: [{ name: 'hi', command: 'echo hi' }] });

    const first = await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id);
    expect(first.targets.map((t: { server_id: string }) => t.server_id)).toEqual([a]);
    expect(first.status).toBe('success');

    await ops.patchServer(b, { tags: ['api', 'prod'] });
    const plan = await ops.plan(deployment.id);
    expect(plan.targets.map((t: { server_id: string }) => t.server_id)).toEqual([a, b]);
    const second = await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id);
    expect(second.targets.map((t: { server_id: string; status: string }) => [t.server_id, t.status])).toEqual([[a, 'success'], [b, 'success']]);

    // No server has the tags any more: the trigger is refused, nothing runs.
    await ops.patchServer(a, { tags: [] });
    await ops.patchServer(b, { tags: [] });
    const none = await bosun.api.post(`/api/v1/deployments/${deployment.id}/run`).set('Authorization', `Bearer ${ops.token}`);
    expect([none.status, none.body.error.code]).toEqual([409, 'conflict']);
    expect((await ops.plan(deployment.id)).warnings).toEqual([expect.objectContaining({ code: 'no_targets' })]);
  });
});
