import { userWithToken, type User } from '../support/client';
import { eventually } from '../support/eventually';
import { authorizeKey, GitServer, newDeployKey, type TestRepository } from '../support/git-server';
import { agentAccount } from '../support/mcp';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { Sshd } from '../support/sshd';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/*
 * Sync sources (issue 38, the pull side) on the real stack: a real repository served on loopback
 * (git daemon, and the tests' sshd), synced by the worker's workflow as the source's service account.
 */

type Json = any;

describe('config as code: sync sources', () => {
  let bosun: SharedBosun;
  let git: GitServer;
  let sshd: Sshd;
  let admin: User;
  const deployKey = newDeployKey();
  /** Every answer of the API in this file: none may carry a credential. */
  const answers: string[] = [];

  /** A deployment's definition as its file holds it. */
  const deployment = (name: string, command: string) => `kind: Deployment
name: ${name}
spec:
  server: web-1
  steps:
    - name: deploy
      command: ${command}
`;

  const call = async (user: User, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: Json) => {
    const res = await user.request(method, `/config/sources${path}`, body);
    answers.push(JSON.stringify(res.body ?? null));
    return res;
  };
  const addSource = async (body: Json) => {
    const res = await call(admin, 'post', '', body);
    if (res.status !== 201) throw new Error(`add a source: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Json;
  };
  const sourceOf = async (id: string) => (await call(admin, 'get', `/${id}`)).body.data as Json;
  /** Syncs now and waits for the status to show `done` (a sync's outcome lands on the status whatever it is). */
  const syncUntil = async (id: string, done: (source: Json) => boolean, body: Json = {}) => {
    const asked = await call(admin, 'post', `/${id}/sync`, body);
    expect(asked.status).toBe(202);
    return eventually(() => sourceOf(id), done, 60_000);
  };
  const deploymentNamed = async (name: string) => {
    const found = ((await admin.request('get', '/deployments?per_page=100')).body.data as Json[]).find((d) => d.name === name);
    return found ? (await admin.request('get', `/deployments/${found.id}`)).body.data : null;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    [git, sshd] = await Promise.all([GitServer.start(), Sshd.startPrivate()]);
    authorizeKey(sshd.info, deployKey.publicKey);
    admin = userWithToken(bosun, await bosun.token('sources'));
    await admin.addServer({ title: 'web-1', host: '127.0.0.2' });
    await agentAccount(admin, 'config-sync', { role: 'admin' });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([git?.stop(), sshd?.stop()]);
    await bosun.stop();
  });

  test('a git:// source applies each new commit; a broken one is reported and told, applying nothing; the fix recovers; a force-push names both revisions', async () => {
    const receiver: WebhookReceiver = await startReceiver();
    try {
      const channel = (await admin.request('post', '/notification-channels', { name: 'config-sync', type: 'webhook', url: receiver.url, events: ['config.sync_failed'] })).body.data;
      receiver.secret = channel.secret;
      const repo: TestRepository = await git.repository('platform');
      const first = await repo.commit({ 'bosun/web.yaml': deployment('web-release', 'echo v1'), 'README.md': '# not a definition' });
      const source = await addSource({ name: 'platform-repo', git: { url: repo.gitUrl, path: 'bosun/' }, run_as: 'config-sync', web_url: 'https://git.example.com/acme/platform' });
      expect(source).toMatchObject({ git: { url: repo.gitUrl, ref: 'main', path: 'bosun/' }, every: null, prune: false, run_as: { name: 'config-sync' }, has_credentials: false, status: { revision_applied: null, last_error: null } });

      const synced = await syncUntil(source.id, (s) => s.status.revision_applied === first);
      expect(synced.status).toMatchObject({ last_error: null, last_plan: { revision: first, create: 1, update: 0, delete: 0, error_count: 0 }, drift: [] });
      expect(await deploymentNamed('web-release')).toMatchObject({ steps: [{ command: 'echo v1' }], managed_by: { source: 'platform-repo', revision: first, path: 'bosun/web.yaml' } });

      const second = await repo.commit({ 'bosun/web.yaml': deployment('web-release', 'echo v2') });
      await syncUntil(source.id, (s) => s.status.revision_applied === second);
      expect(await deploymentNamed('web-release')).toMatchObject({ steps: [{ command: 'echo v2' }], managed_by: { revision: second } });

      // A commit that breaks the YAML: nothing applied, the status says where, a channel is told.
      const broken = await repo.commit({ 'bosun/web.yaml': deployment('web-release', 'echo v3').replace('steps:', 'steps: [') });
      const failed = await syncUntil(source.id, (s) => s.status.last_error?.revision === broken);
      expect(failed.status).toMatchObject({ revision_applied: second, last_error: { code: 'plan_failed', message: expect.stringMatching(/bosun\/web\.yaml:\d+:\d+: /) } });
      expect(failed.status.last_plan.errors[0]).toMatch(/^bosun\/web\.yaml:\d+:\d+: /);
      expect(await deploymentNamed('web-release')).toMatchObject({ steps: [{ command: 'echo v2' }] });
      const [told] = await eventually(async () => receiver.events('config.sync_failed'), (r) => r.length === 1, 60_000);
      expect(told!.verified).toBe(true);
      expect(told!.json).toMatchObject({ source: { id: source.id, name: 'platform-repo', revision: broken, revision_applied: second }, error: { code: 'plan_failed' } });

      const fixed = await repo.commit({ 'bosun/web.yaml': deployment('web-release', 'echo v4') });
      const recovered = await syncUntil(source.id, (s) => s.status.revision_applied === fixed);
      expect(recovered.status.last_error).toBeNull();
      expect(await deploymentNamed('web-release')).toMatchObject({ steps: [{ command: 'echo v4' }] });

      // History rewritten: applied like any revision; the apply's audit entry names the one before too.
      const rewritten = await repo.forcePush({ 'bosun/web.yaml': deployment('web-release', 'echo v5') });
      await syncUntil(source.id, (s) => s.status.revision_applied === rewritten);
      const applies = await eventually(
        async () => ((await admin.request('get', '/audit?action=config.apply')).body.data as Json[]).map((e) => e.details),
        (details) => details.some((d: Json) => d.revision === rewritten),
        30_000,
      );
      expect(applies.find((d: Json) => d.revision === rewritten)).toMatchObject({ source: 'platform-repo', previous_revision: fixed, updated: 1, sync: true });
      expect(receiver.events('config.sync_failed')).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  }, 240_000);

  test('an ssh:// source with a deploy key refuses an unknown host key until it is pinned, then syncs; credentials never come back', async () => {
    const repo = await git.repository('over-ssh');
    const revision = await repo.commit({ 'ssh.yaml': deployment('over-ssh', 'echo ssh') });
    const { url, hostKey } = repo.overSsh(sshd.info);
    const source = await addSource({ name: 'ssh-repo', git: { url }, credentials: { type: 'ssh_key', private_key: deployKey.privateKey }, run_as: 'config-sync' });
    expect(source).toMatchObject({ has_credentials: true, host_key_fingerprint: null });

    const refused = await syncUntil(source.id, (s) => s.status.last_error !== null);
    expect(refused.status).toMatchObject({ revision_applied: null, last_error: { code: 'host_key_unknown' }, offered_host_key: { key: hostKey.split(/\s+/).slice(0, 2).join(' '), fingerprint: expect.stringMatching(/^SHA256:/) } });
    expect(await deploymentNamed('over-ssh')).toBeNull();

    const trusted = await syncUntil(source.id, (s) => s.status.revision_applied === revision, { trust_new_host_key: true });
    expect(trusted).toMatchObject({ host_key_fingerprint: refused.status.offered_host_key.fingerprint, status: { last_error: null, offered_host_key: null } });
    expect(await deploymentNamed('over-ssh')).toMatchObject({ managed_by: { source: 'ssh-repo', revision } });

    // Nothing offered now: nothing to trust.
    const nothing = await call(admin, 'post', `/${source.id}/sync`, { trust_new_host_key: true });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.details).toEqual([{ path: 'trust_new_host_key', message: expect.stringContaining('no sync was refused') }]);

    const secretLines = deployKey.privateKey.split('\n').filter((line) => line.length > 20);
    for (const answer of answers) for (const line of secretLines) expect(answer).not.toContain(line);
  }, 120_000);

  test('`every` puts a Temporal Schedule behind the source: a tick syncs; without `every` or without the source it is gone', async () => {
    const repo = await git.repository('scheduled');
    const revision = await repo.commit({ 'tick.yaml': deployment('ticked', 'echo tick') });
    const source = await addSource({ name: 'scheduled-repo', git: { url: repo.gitUrl }, every: '1h', run_as: 'config-sync' });
    const schedule = bosun.temporal.schedule.getHandle(`bosun-config-source-${source.id}`);
    expect((await schedule.describe()).spec.intervals).toMatchObject([{ every: 3_600_000 }]);
    // The clock's tick, now rather than in an hour.
    await schedule.trigger();
    await eventually(() => sourceOf(source.id), (s) => s.status.revision_applied === revision, 60_000);

    expect((await call(admin, 'patch', `/${source.id}`, { every: null })).body.data.every).toBeNull();
    await expect(schedule.describe()).rejects.toThrow();
    expect((await call(admin, 'patch', `/${source.id}`, { every: '5m' })).status).toBe(200);
    expect((await schedule.describe()).spec.intervals).toMatchObject([{ every: 300_000 }]);
    expect((await call(admin, 'delete', `/${source.id}`)).status).toBe(204);
    await expect(schedule.describe()).rejects.toThrow();
    // What it applied stays, still marked.
    expect(await deploymentNamed('ticked')).toMatchObject({ managed_by: { source: 'scheduled-repo' } });
  }, 120_000);

  test('the worker repairs drift both ways: a source’s Temporal Schedule deleted behind Bosun’s back comes back; one without its source goes', async () => {
    const source = await addSource({ name: 'drifting-repo', git: { url: 'git://127.0.0.1:9/drifting.git' }, every: '24h', run_as: 'config-sync' });
    const ours = bosun.temporal.schedule.getHandle(`bosun-config-source-${source.id}`);
    const { taskQueue } = (await ours.describe()).action;
    await ours.delete();
    // A stray one of this Bosun's (its task queue) with no source behind it.
    const stray = bosun.temporal.schedule.getHandle(`bosun-config-source-${'f'.repeat(24)}`);
    await bosun.temporal.schedule.create({ scheduleId: stray.scheduleId, spec: { intervals: [{ every: '1h' }] }, action: { type: 'startWorkflow', workflowType: 'configSyncWorkflow', taskQueue, args: [] }, state: { paused: true } });
    const exists = (handle: typeof ours) => handle.describe().then(() => true, () => false);
    // The worker's sweep reconciles every tenth round (20 s in tests): waited for, not slept.
    await eventually(() => exists(ours), Boolean, 60_000);
    await eventually(() => exists(stray), (there) => !there, 60_000);
  }, 150_000);

  test('a commit that would leave the organization without an administrator is refused whole (apply_refused), nothing of it applied', async () => {
    const owner = userWithToken(bosun, await bosun.token('sources-admins'));
    const me = (await owner.request('get', '/me')).body.data.identity as { id: string; name: string };
    const sync = await agentAccount(owner, 'admins-sync', { role: 'admin' });
    const bindings = (role: string) =>
      [me.name, 'admins-sync'].map((account, i) => `kind: RoleBinding\nname: admin-${i}\nspec:\n  role: ${role}\n  subject: service-account:${account}\n`).join('---\n');
    const repo = await git.repository('admins');
    const first = await repo.commit({ 'access.yaml': bindings('admin') });
    const source = (await owner.request('post', '/config/sources', { name: 'access-repo', git: { url: repo.gitUrl }, run_as: 'admins-sync' })).body.data as Json;
    expect((await owner.request('post', `/config/sources/${source.id}/sync`, {})).status).toBe(202);
    await eventually(async () => (await owner.request('get', `/config/sources/${source.id}`)).body.data as Json, (s) => s.status.revision_applied === first, 60_000);
    // The bindings made by hand go: the files' are the only admins now.
    const listed = (await owner.request('get', '/role-bindings?per_page=100')).body.data as Json[];
    for (const b of listed.filter((b) => b.name === null && [me.id, sync.id].includes(b.subject.id))) expect((await owner.request('delete', `/role-bindings/${b.id}`)).status).toBe(204);

    const demoted = await repo.commit({ 'access.yaml': bindings('operator') });
    expect((await owner.request('post', `/config/sources/${source.id}/sync`, {})).status).toBe(202);
    const refused = await eventually(async () => (await owner.request('get', `/config/sources/${source.id}`)).body.data as Json, (s) => s.status.last_error?.revision === demoted, 60_000);
    expect(refused.status).toMatchObject({ revision_applied: first, last_error: { code: 'apply_refused', message: expect.stringMatching(/^The files at [0-9a-f]{7} were refused whole, nothing was applied: This apply would leave the organization without an administrator/) } });
    const after = (await owner.request('get', '/role-bindings?per_page=100')).body.data as Json[];
    expect(after.filter((b) => b.name?.startsWith('admin-')).map((b) => b.role)).toEqual(['admin', 'admin']);
  });

  test('bad input is refused naming each problem; a name is unique; another organization’s source is not found', async () => {
    const bad = await call(admin, 'post', '', { name: 'bad', git: { url: 'git://127.0.0.1/x.git', host_key: 'not a key' }, every: '10s', run_as: 'config-sync', web_url: 'http://insecure.example.com' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: Json) => d.path).sort()).toEqual(['every', 'git.host_key', 'web_url']);
    const local = await call(admin, 'post', '', { name: 'local', git: { url: 'file:///etc' }, run_as: 'config-sync' });
    expect(local.status).toBe(422);
    expect(local.body.error.details).toEqual([{ path: 'git.url', message: expect.stringContaining('file') }]);
    const nobody = await call(admin, 'post', '', { name: 'nobody', git: { url: 'git://127.0.0.1/x.git' }, run_as: 'ghost' });
    expect(nobody.body.error.details).toEqual([{ path: 'run_as', message: 'no service account named "ghost" in the organization' }]);

    const mine = await addSource({ name: 'mine', git: { url: 'git://127.0.0.1/mine.git' }, run_as: 'config-sync' });
    expect((await call(admin, 'post', '', { name: 'mine', git: { url: 'git://127.0.0.1/other.git' }, run_as: 'config-sync' })).status).toBe(409);

    const other = userWithToken(bosun, await bosun.token('sources-other'));
    for (const [method, suffix] of [['get', ''], ['patch', ''], ['delete', ''], ['post', '/sync']] as const) {
      const res = await call(other, method, `/${mine.id}${suffix}`, method === 'patch' ? { prune: true } : undefined);
      expect([method, suffix, res.status]).toEqual([method, suffix, 404]);
    }
    expect((await call(other, 'get', '')).body.data).toEqual([]);
    expect((await sourceOf(mine.id)).prune).toBe(false);
  });
});
