import { userWithToken, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { agentAccount } from '../support/mcp';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { connectSocket, type BosunSocket } from '../support/socket';

/*
 * `ConfigChanged` (docs/events.md) on the real stack: every socket of an organization hears that what
 * it keeps in Git changed — an apply, a forced change, a source's sync failing — whoever made it, once
 * per burst, and no other organization hears it.
 */

type Json = any;

describe('config as code: open consoles hear ConfigChanged', () => {
  let bosun: SharedBosun;
  const sockets: BosunSocket[] = [];

  beforeAll(async () => {
    bosun = await sharedBosun();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await bosun.stop();
  });

  const deployment = (name: string, command = 'echo deploy') => `kind: Deployment\nname: ${name}\nspec:\n  server: web-1\n  steps:\n    - name: deploy\n      command: ${JSON.stringify(command)}\n`;
  const body = (documents: string[], revision = 'abc1234') => ({ source: 'platform-repo', revision, files: documents.map((content, i) => ({ path: `deploy/${i}.yaml`, content })) });

  /** An organization with a server, its admin, and a socket that notes when each ConfigChanged came. */
  async function organization(name: string) {
    const admin = userWithToken(bosun, await bosun.token(name));
    await admin.addServer({ title: 'web-1', host: '127.0.0.2' });
    const socket = await connectSocket(bosun.url, admin.token);
    sockets.push(socket);
    const heard: number[] = [];
    socket.on('ConfigChanged', () => heard.push(Date.now()));
    return { admin, heard };
  }
  const apply = async (admin: User, b: object) => {
    const res = await admin.request('post', '/config/apply', b);
    if (res.status !== 200) throw new Error(`apply: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Json;
  };
  /** Resolves once `heard` holds more than `before` events. */
  const heardMore = (heard: number[], before: number) => eventually(async () => heard.length, (n) => n > before, 30_000);

  test('an apply is heard by its organization’s sockets, from the API and from another token alike; another organization hears nothing of it', async () => {
    const acme = await organization('cfg-events-acme');
    const other = await organization('cfg-events-other');
    // A second socket of the organization, of another identity (a service account), hears it too.
    const ci = await agentAccount(acme.admin, 'ci-events', { role: 'admin' });
    const ciSocket = await connectSocket(bosun.url, ci.token);
    sockets.push(ciSocket);
    const ciHeard: number[] = [];
    ciSocket.on('ConfigChanged', () => ciHeard.push(Date.now()));

    await apply(userWithToken(bosun, ci.token), body([deployment('web-release')]));
    await Promise.all([heardMore(acme.heard, 0), heardMore(ciHeard, 0)]);

    // The other organization's own apply is the first thing it hears: nothing of acme's came before.
    const otherApplied = Date.now();
    await apply(other.admin, body([deployment('api-release')]));
    await heardMore(other.heard, 0);
    expect(other.heard[0]!).toBeGreaterThanOrEqual(otherApplied);
  });

  test('a forced change of a managed definition is heard; an apply of 150 documents is heard as one burst, not 151 times', async () => {
    const acme = await organization('cfg-events-burst');
    const names = Array.from({ length: 150 }, (_, i) => `svc-${String(i).padStart(3, '0')}`);
    await apply(acme.admin, body(names.map((name) => deployment(name))));
    await heardMore(acme.heard, 0);
    // The burst's entries are chained in one or a few rounds: a handful of events, not one per entry.
    await eventually(async () => (await acme.admin.request('get', '/audit?action=config.create&per_page=1')).body.meta.total, (n) => n === 150, 30_000);
    const afterBurst = acme.heard.length;
    expect(afterBurst).toBeLessThanOrEqual(6);

    const { id } = await findDeployment(acme.admin, 'svc-000');
    const forced = await acme.admin.request('patch', `/deployments/${id}`, { steps: [{ name: 'deploy', command: 'echo forced' }], force: true });
    expect(forced.status).toBe(200);
    await heardMore(acme.heard, afterBurst);
    const drift = (await acme.admin.request('get', '/config/drift')).body.data as Json[];
    expect(drift.map((d) => d.name)).toEqual(['svc-000']);
  });

  test('a source’s sync that fails is heard: its status changed, though nothing was applied', async () => {
    const acme = await organization('cfg-events-sync');
    await agentAccount(acme.admin, 'config-sync', { role: 'admin' });
    // Nothing listens on port 9 of this address: the fetch fails, the status says so.
    const source = (await acme.admin.request('post', '/config/sources', { name: 'platform-repo', git: { url: 'git://127.0.0.1:9/platform.git' }, run_as: 'config-sync' })).body.data as Json;
    await heardMore(acme.heard, 0);
    const before = acme.heard.length;
    expect((await acme.admin.request('post', `/config/sources/${source.id}/sync`, {})).status).toBe(202);
    const failed = await eventually(async () => (await acme.admin.request('get', `/config/sources/${source.id}`)).body.data as Json, (s) => !!s.status.last_error, 60_000);
    expect(failed.status.last_error.code).toBe('unreachable');
    await heardMore(acme.heard, before);
  });

  async function findDeployment(admin: User, name: string): Promise<Json> {
    for (let page = 1; ; page += 1) {
      const listed = (await admin.request('get', `/deployments?per_page=100&page=${page}`)).body.data as Json[];
      const found = listed.find((d) => d.name === name);
      if (found || listed.length < 100) return found;
    }
  }
});
