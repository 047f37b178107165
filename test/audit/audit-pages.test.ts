import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { userWithToken } from '../support/client';
import { insertChainedEntries, organizationIdOf } from '../support/audit-bulk';

type Json = any;

/**
 * The trail's list over HTTP: each entry names what it is about as it is now (its deployment, run and
 * server, of the caller's organization only), pages are reached by cursors, and the filters' choices.
 */
describe('the audit trail’s list: names, cursors and choices', () => {
  let bosun: SharedBosun;

  beforeAll(async () => {
    bosun = await sharedBosun();
  });
  afterAll(async () => {
    await bosun?.stop();
  });

  const get = (token: string, path: string) => bosun.api.get(`/api/v1${path}`).set(bearer(token));
  const entries = (token: string, query: string, done: (list: Json[]) => boolean) =>
    eventually(async () => ((await get(token, `/audit?per_page=100&${query}`)).body.data ?? []) as Json[], done);

  test('an entry names its deployment, run and server; a deleted one keeps its id; another organization’s are never named', async () => {
    const admin = await bosun.token('names');
    const ops = userWithToken(bosun, admin);
    const server = await ops.addServer({ title: 'web-1' });
    const deployment = await ops.defineDeployment(server, [{ name: 'hello', command: 'echo hello' }], 'deploy-web');
    const run = await ops.runToEnd(deployment.id);
    const doomed = await ops.addServer({ title: 'doomed-1', host: '127.0.0.2' });
    expect((await ops.request('delete', `/servers/${doomed}`)).status).toBe(204);

    const [command] = await entries(admin, `action=command.run&run=${run.id}`, (list) => list.length === 1);
    expect(command.subjects).toEqual({
      deployment: { id: deployment.id, name: 'deploy-web', deleted: false },
      run: { id: run.id, deployment_id: deployment.id, fleet_run_id: null, deleted: false },
      server: { id: server, name: 'web-1', deleted: false },
    });
    const [trigger] = await entries(admin, 'action=run.trigger', (list) => list.length === 1);
    expect(trigger.subjects).toMatchObject({ deployment: { name: 'deploy-web' }, run: { id: run.id, deleted: false }, server: null });
    const created = (await entries(admin, 'action=server.create', (list) => list.some((entry) => entry.target.id === doomed))).find((entry) => entry.target.id === doomed);
    expect(created.subjects.server).toEqual({ id: doomed, name: null, deleted: true });

    // A stranger asks about the first organization's server: its entry names the id, never the title.
    const stranger = await bosun.token('names-stranger');
    expect((await bosun.api.post(`/api/v1/servers/${server}/verify`).set(bearer(stranger))).status).toBe(404);
    const [refused] = await entries(stranger, `server=${server}`, (list) => list.length === 1);
    expect(refused.subjects.server).toEqual({ id: server, name: null, deleted: true });
    expect(JSON.stringify((await get(stranger, '/audit?per_page=100')).body)).not.toMatch(/web-1|deploy-web/);

    // The filters' choices: the organization's own people, service accounts and servers by name, and every action.
    const choices = (await get(admin, '/audit/choices')).body.data;
    expect(choices.servers).toEqual([{ id: server, name: 'web-1' }]);
    expect(choices.actions).toEqual(expect.arrayContaining(['command.run', 'run.trigger', 'server.create', 'server.delete', 'session.sign_in']));
    const theirs = (await get(stranger, '/audit/choices')).body.data;
    expect(theirs.servers).toEqual([]);
    expect(theirs.actors.map((actor: Json) => actor.id)).not.toEqual(expect.arrayContaining(choices.actors.map((actor: Json) => actor.id)));
  });

  test('200 entries read 50 at a time by cursor, older and back newer, each page placed among them all', async () => {
    const token = await bosun.token('pages');
    await insertChainedEntries(bosun.mongoUri, await organizationIdOf(bosun.mongoUri, bosun.org('pages')), 200);
    const seqs = (body: Json) => body.data.map((entry: Json) => entry.seq);
    const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

    const first = (await get(token, '/audit?per_page=50')).body;
    expect(seqs(first)).toEqual(range(200, 151));
    expect(first.meta).toEqual({ current_page: 1, per_page: 50, total: 200, last_page: 4, offset: 0, newer_after: null, older_before: 151 });
    const second = (await get(token, `/audit?per_page=50&before=${first.meta.older_before}`)).body;
    expect(seqs(second)).toEqual(range(150, 101));
    expect(second.meta).toMatchObject({ current_page: 2, offset: 50, newer_after: 150, older_before: 101 });
    const last = (await get(token, '/audit?per_page=50&before=51')).body;
    expect(seqs(last)).toEqual(range(50, 1));
    expect(last.meta).toMatchObject({ current_page: 4, offset: 150, newer_after: 50, older_before: null });
    const back = (await get(token, `/audit?per_page=50&after=${second.meta.newer_after}`)).body;
    expect(seqs(back)).toEqual(range(200, 151));
    expect(back.meta).toMatchObject({ current_page: 1, offset: 0, newer_after: null });

    // Filtered, the same cursors over the entries that match (counted, not computed from the chain).
    const filtered = (await get(token, '/audit?per_page=50&action=command.run&before=120')).body;
    expect(seqs(filtered)).toEqual(range(119, 70));
    expect(filtered.meta).toMatchObject({ total: 200, offset: 81, newer_after: 119, older_before: 70 });
    expect(filtered.data[0].subjects).toEqual({ deployment: null, run: { id: '65f000000000000000000002', deployment_id: null, fleet_run_id: null, deleted: true }, server: { id: '65f000000000000000000001', name: null, deleted: true } });

    for (const bad of ['before=0', 'after=x', 'before=10&after=5', 'page=2&before=10']) {
      const res = await get(token, `/audit?${bad}`);
      expect([bad, res.status, res.body.error.code]).toEqual([bad, 422, 'validation_failed']);
    }
  });
});
