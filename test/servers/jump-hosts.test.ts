import { bearer, eventually, runEnded, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PrivateNetwork } from '../support/private-network';
import { sharedFolder, treeDigest } from '../support/trees';

// The API's JSON, as the tests read it.
type Json = any;

/** `/proc/net/dev` lists the network interfaces of the process's own network namespace: only `lo` inside the private network. */
const INTERFACES = 'grep -c : /proc/net/dev';

describe('jump hosts: servers reached only through a bastion (real OpenSSH, a private network namespace)', () => {
  let bosun: Bosun;
  let ops: User;
  let network: PrivateNetwork;
  let bastion: string;
  /** The sshd login, on the bastion's port: how the test adds the bastion. */
  let bastionSshd: Bosun['sshd'];
  /** The same login on the private network's sshd port (answering only inside it). */
  let insideSshd: Bosun['sshd'];

  beforeAll(async () => {
    bosun = await startBosun();
    ops = await asUser(bosun, 'jump-hosts');
    network = await PrivateNetwork.start(bosun.sshd);
    bastionSshd = { ...bosun.sshd, port: network.bastion.port };
    insideSshd = { ...bosun.sshd, port: network.insidePort };
    bastion = await ops.addServer({ host: network.bastion.host, title: 'bastion', sshd: bastionSshd });
  }, 120_000);
  afterAll(async () => {
    await bosun?.stop();
    await network?.stop();
  });

  const addBehind = async (host: string, via: string[], title = `inside-${host}`) => {
    const created = await ops.request('post', '/servers', { title, host, port: network.insidePort, username: insideSshd.username, auth_method: 'private_key', private_key: insideSshd.privateKey, via });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  const serverOf = (id: string) => ops.getServer(id);

  test('a server inside is unreachable directly, verified through the bastion, and its steps run inside', async () => {
    // Directly: nothing answers that port on the tests' network.
    const direct = await addBehind('127.0.0.3', [], 'inside-direct');
    // The same address behind the bastion is another server.
    const refused = await eventually(() => serverOf(direct), (s: Json) => /refused/i.test(s.last_error ?? ''), 60_000);
    expect(refused.status).toBe('unverified');

    const inside = await addBehind('127.0.0.3', [bastion]);
    const verified = await eventually(() => serverOf(inside), (s: Json) => s.status === 'verified', 60_000);
    expect(verified.via).toEqual([bastion]);
    expect(verified.host_key_fingerprint).toMatch(/^SHA256:/);
    expect(verified.fingerprint.os.kernel).toBeTruthy();

    const { id } = await ops.defineDeployment(inside, [{ name: 'where', command: INTERFACES }]);
    const run = await ops.runToEnd(id);
    expect(run.status).toBe('success');
    expect(run.steps[0].output.trim()).toBe('1');

    // A conversation's step goes the same way.
    const conversation = await ops.startConversation(inside, 'show the hostname');
    const ended = await eventually(() => ops.getConversation(conversation.id), (c: Json) => ['completed', 'failed', 'cancelled', 'awaiting_approval'].includes(c.status), 60_000);
    expect(ended.status).toBe('completed');
  }, 180_000);

  test('a two-hop chain: the first hop’s own via is followed', async () => {
    const hop = await addBehind('127.0.0.4', [bastion], 'second-hop');
    await eventually(() => serverOf(hop), (s: Json) => s.status === 'verified', 60_000);
    const deep = await addBehind('127.0.0.5', [hop], 'behind-two');
    await eventually(() => serverOf(deep), (s: Json) => s.status === 'verified', 60_000);
    const { id } = await ops.defineDeployment(deep, [{ name: 'where', command: INTERFACES }]);
    const run = await ops.runToEnd(id);
    expect(run.status).toBe('success');
    expect(run.steps[0].output.trim()).toBe('1');
    // A hop in use cannot be deleted: 409 naming what is behind it.
    const refused = await ops.request('delete', `/servers/${hop}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('behind-two');
  }, 180_000);

  test('a bastion killed mid-step: the step is retried and the run recovers when it is back', async () => {
    const inside = await addBehind('127.0.0.6', [bastion]);
    await eventually(() => serverOf(inside), (s: Json) => s.status === 'verified', 60_000);
    const { id } = await ops.defineDeployment(inside, [{ name: 'slow', command: 'echo started; sleep 2; echo done' }]);
    const { run_id: runId } = await ops.trigger(id);
    await ops.waitForRun(id, runId, (r: Json) => r.steps[0].output.includes('started'));
    await network.killBastion();
    const stalled = await ops.waitForRun(id, runId, (r: Json) => r.steps[0].output.includes('retrying') || runEnded(r), 60_000);
    expect(stalled.status).not.toBe('failed');
    // Meanwhile a server added behind it cannot be verified, and says which hop failed and how.
    const behindDown = await addBehind('127.0.0.8', [bastion], 'behind-a-down-bastion');
    const unreachable = await eventually(() => serverOf(behindDown), (s: Json) => !!s.last_error, 60_000);
    expect(unreachable.status).toBe('unverified');
    expect(unreachable.last_error).toContain(`jump host ${bosun.sshd.username}@${network.bastion.host}:${network.bastion.port}`);
    expect(unreachable.last_error).toMatch(/refused/i);
    await network.startBastion();
    const run = await ops.waitForRun(id, runId, runEnded, 120_000);
    expect(run.status).toBe('success');
    expect(run.steps[0].output).toContain('done');
  }, 240_000);

  test('a fleet of 20 servers behind one bastion runs over one connection to it', async () => {
    // No connection to the bastion left from before: the count starts at the next one.
    await network.killBastion();
    await network.startBastion();
    const before = network.bastionConnections;
    const hosts = Array.from({ length: 20 }, (_, i) => `127.0.0.${i + 11}`);
    const servers = await Promise.all(hosts.map((host) => addBehind(host, [bastion], `fleet-${host}`)));
    for (const server of servers) await eventually(() => serverOf(server), (s: Json) => s.status === 'verified', 120_000);
    // The 20 verifications went through one connection to the bastion.
    expect(network.bastionConnections - before).toBe(1);
    for (const server of servers) await ops.patchServer(server, { tags: ['behind-bastion'] });
    const deployment = await ops.define({ targets: { tags: ['behind-bastion'] }, strategy: { batch_size: 20 }, steps: [{ name: 'where', command: INTERFACES }] });
    // The run's 20 targets share one too: that one still open, or (on a slow machine, past the pool's
    // idle time since the verifications) a single new one.
    const beforeRun = network.bastionConnections;
    const run = await ops.runToEnd(deployment.id, 180_000);
    expect(run.status).toBe('success');
    expect(run.targets).toHaveLength(20);
    expect(network.bastionConnections - beforeRun).toBeLessThanOrEqual(1);
  }, 300_000);

  test('an ssh config imported with ProxyJump: a hop it adds is verified first, and what is behind goes through both', async () => {
    const content = [
      'Host inner',
      '  HostName 127.0.0.9',
      `  Port ${network.insidePort}`,
      '  ProxyJump bastion',
      'Host deep',
      '  HostName 127.0.0.10',
      `  Port ${network.insidePort}`,
      '  ProxyJump inner',
      '',
    ].join('\n');
    const body = { format: 'ssh-config', source: 'behind-the-bastion', content, defaults: { username: insideSshd.username, auth_method: 'private_key', private_key: insideSshd.privateKey }, dry_run: false };
    const imported = await ops.request('post', '/servers/import', body);
    expect(imported.status).toBe(200);
    const ids = Object.fromEntries((imported.body.data.add as Json[]).map((a) => [a.title, a.id]));
    expect((imported.body.data.add as Json[]).find((a) => a.title === 'inner').via_ids).toEqual([bastion]);
    expect((imported.body.data.add as Json[]).find((a) => a.title === 'deep').via_ids).toEqual([ids.inner]);
    const deep = await eventually(() => serverOf(ids.deep), (s: Json) => s.status === 'verified' || !!s.last_error, 120_000);
    expect([deep.status, deep.last_error]).toEqual(['verified', null]);
    expect(deep.via).toEqual([ids.inner]);
    const { id } = await ops.defineDeployment(ids.deep, [{ name: 'where', command: INTERFACES }]);
    const run = await ops.runToEnd(id);
    expect([run.status, run.steps[0].output.trim()]).toEqual(['success', '1']);
    // A host behind a jump host that is not verified: the whole import is refused, naming its line.
    const unverified = await ops.request('post', '/servers', { title: 'never-verified', host: '127.0.0.1', port: 1, username: 'nobody', auth_method: 'password', password: 'x' });
    const refused = await ops.request('post', '/servers/import', { ...body, source: 'refused', content: `Host far\n  HostName 127.0.0.12\n  ProxyJump never-verified\n`, dry_run: true });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details[0].message).toMatch(/line 1: far: jump host "never-verified" is not verified/);
    expect(unverified.status).toBe(201);
  }, 240_000);

  test('a migration copies a tree between two servers behind different bastions, through the worker', async () => {
    const other = await PrivateNetwork.start(bosun.sshd, '127.0.0.15');
    try {
      const otherBastion = await ops.addServer({ host: other.bastion.host, title: 'other-bastion', sshd: { ...bosun.sshd, port: other.bastion.port } });
      const source = await addBehind('127.0.0.31', [bastion], 'migrate-from');
      const created = await ops.request('post', '/servers', { title: 'migrate-to', host: '127.0.0.31', port: other.insidePort, username: insideSshd.username, auth_method: 'private_key', private_key: insideSshd.privateKey, via: [otherBastion] });
      expect(created.status).toBe(201);
      const target = created.body.data.id as string;
      for (const id of [source, target]) await eventually(() => serverOf(id), (s: Json) => s.status === 'verified', 60_000);
      // Both "servers" share this machine's filesystem (not its network): each side has its own folder.
      const work = sharedFolder('bosun-jump-copy-');
      const from = path.join(work, 'www');
      mkdirSync(path.join(from, 'static'), { recursive: true });
      writeFileSync(path.join(from, 'index.html'), '<h1>behind two bastions</h1>\n');
      writeFileSync(path.join(from, 'static/blob.bin'), Buffer.alloc(512 * 1024, 3));
      const to = path.join(work, 'copied/www');
      const plan = await ops.planMigration(source, target);
      const conversation = await ops.startMigration(plan.id, `copy ${from} to the target at ${to}`);
      const done = await eventually(() => ops.getConversation(conversation.id), (c: Json) => ['completed', 'failed', 'cancelled', 'awaiting_approval'].includes(c.status), 120_000);
      expect(done.status).toBe('completed');
      expect(done.steps[0].transfer).toMatchObject({ kind: 'copy', source_server_id: source });
      expect(treeDigest(to)).toEqual(treeDigest(from));
    } finally {
      await other.stop();
    }
  }, 240_000);

  test('a bastion whose host key changed is refused, and the error names it', async () => {
    const inside = await addBehind('127.0.0.7', [bastion]);
    await eventually(() => serverOf(inside), (s: Json) => s.status === 'verified', 60_000);
    const { id } = await ops.defineDeployment(inside, [{ name: 'never', command: 'echo ran' }]);
    await network.killBastion();
    network.rotateBastionHostKey();
    await network.startBastion();
    const run = await ops.runToEnd(id, 120_000);
    expect(run.status).toBe('failed');
    const said = `${run.error ?? ''} ${run.steps[0].output}`;
    expect(said).toMatch(/jump host/i);
    expect(said).toContain(`${network.bastion.host}:${network.bastion.port}`);
    expect(said).toMatch(/host key/i);
    expect(run.steps[0].output).not.toContain('ran');
  }, 180_000);
});

describe('jump hosts: what a via may not be', () => {
  let bosun: Bosun;
  let ops: User;
  const servers: string[] = [];
  beforeAll(async () => {
    bosun = await startBosun();
    ops = await asUser(bosun, 'via-rules');
    for (const host of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']) servers.push(await ops.addServer({ host }));
  }, 120_000);
  afterAll(() => bosun?.stop());

  const create = (via: unknown) => ops.request('post', '/servers', { title: 'behind', host: '127.0.0.8', port: bosun.sshd.port, username: bosun.sshd.username, auth_method: 'password', password: 'x', via });
  const viaError = (res: { status: number; body: Json }) => {
    expect(res.status).toBe(422);
    return (res.body.error.details as Array<{ path: string; message: string }>).find((d) => d.path.startsWith('via'))?.message ?? '';
  };

  test('a cycle, a hop of another organization, an unverified hop, a chain longer than 4: 422, nothing changed', async () => {
    const [a, b, c, d, e] = servers as [string, string, string, string, string];
    expect((await ops.patchServer(b, { via: [a] })).via).toEqual([a]);
    // a via b while b goes via a.
    expect(viaError(await ops.request('patch', `/servers/${a}`, { via: [b] }))).toMatch(/cycle/);
    expect(viaError(await ops.request('patch', `/servers/${a}`, { via: [a] }))).toMatch(/cycle/);
    expect((await ops.getServer(a)).via).toEqual([]);

    const other = await asUser(bosun, 'someone-else');
    const theirs = await other.addServer({ host: '127.0.0.10' });
    expect(viaError(await create([theirs]))).toContain('not a server of this organization');
    expect(viaError(await create(['0123456789abcdef01234567']))).toContain('not a server of this organization');
    expect(viaError(await create(['not-an-id']))).toBeTruthy();

    // b's route is [a, b]: with c, d, e after it the chain is five long.
    expect(viaError(await create([b, c, d, e]))).toMatch(/at most 4/);
    expect(viaError(await create([a, b, c, d, e]))).toMatch(/at most 4/);
    // A hop whose own route grows makes the servers behind it too long: refused on the hop.
    expect((await create([c, d, e])).status).toBe(201);
    expect(viaError(await ops.request('patch', `/servers/${c}`, { via: [a, b] }))).toMatch(/at most 4/);
    expect((await ops.getServer(c)).via).toEqual([]);
    const unverified = (await ops.request('post', '/servers', { title: 'never-verified', host: '127.0.0.11', port: 1, username: 'nobody', auth_method: 'password', password: 'x' })).body.data.id as string;
    expect(viaError(await create([unverified]))).toMatch(/not verified/);
    const listed = (await bosun.api.get('/api/v1/servers?per_page=100').set(bearer(ops.token))).body.data as Json[];
    expect(listed.filter((s) => s.title === 'behind')).toHaveLength(1);
  });
});

describe('jump hosts: a server behind a bastion is watched through it', () => {
  let bosun: Bosun;
  let network: PrivateNetwork;
  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 1 });
    network = await PrivateNetwork.start(bosun.sshd, '127.0.0.16');
  }, 120_000);
  afterAll(async () => {
    await bosun?.stop();
    await network?.stop();
  });

  test('the bastion down → offline, the reason naming the jump host; back → verified', async () => {
    const ops = await asUser(bosun, 'watched-behind');
    const bastion = await ops.addServer({ host: network.bastion.host, title: 'bastion', sshd: { ...bosun.sshd, port: network.bastion.port } });
    const created = await ops.request('post', '/servers', { title: 'watched', host: '127.0.0.3', port: network.insidePort, username: bosun.sshd.username, auth_method: 'private_key', private_key: bosun.sshd.privateKey, via: [bastion] });
    const id = created.body.data.id as string;
    await eventually(() => ops.getServer(id), (s: Json) => s.status === 'verified', 60_000);
    await network.killBastion();
    const offline = await eventually(() => ops.getServer(id), (s: Json) => s.status === 'offline', 60_000);
    expect(offline.last_error).toContain(`jump host ${bosun.sshd.username}@${network.bastion.host}:${network.bastion.port}`);
    await network.startBastion();
    await eventually(() => ops.getServer(id), (s: Json) => s.status === 'verified', 60_000);
  }, 180_000);
});
