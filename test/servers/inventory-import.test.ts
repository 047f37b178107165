import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { addPerson, asUser, type User } from '../support/client';
import { eventually } from '../support/eventually';

/*
 * A team brings its Ansible inventory or ssh config in: the import answers the diff against what an
 * earlier import of the same source made, applies it when asked (servers verified on the tests'
 * sshd), quarantines the hosts that left the inventory, and a broken file changes nothing.
 */

const fixture = (name: string) => readFileSync(path.join(__dirname, '../fixtures/inventories', name), 'utf8');

let bosun: SharedBosun;
let ops: User;
let other: User;

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'importer');
  other = await asUser(bosun, 'importer-neighbour');
});
afterAll(() => bosun.stop());

const importAs = (user: User, body: object) => bosun.api.post('/api/v1/servers/import').set('Authorization', `Bearer ${user.token}`).send(body);
const allServers = async (user: User) => (await user.listServers('per_page=100')).data;

/** The fleet on the tests' sshd: web1-3 and db1 at their own loopback addresses, all in prod. */
const fleetInventory = (hosts: string[], extra = '') => {
  const { port, username } = bosun.sshd;
  const at: Record<string, string> = { web1: '127.0.0.10', web2: '127.0.0.11', web3: '127.0.0.12', db1: '127.0.0.13' };
  const web = hosts.filter((h) => h.startsWith('web')).map((h) => `${h} ansible_host=${at[h]}`);
  return ['[web]', ...web, '[db]', `db1 ansible_host=${at.db1}`, extra, '[prod:children]', 'web', 'db', '[all:vars]', `ansible_port=${port}`, `ansible_user=${username}`].join('\n');
};

describe('inventory import', () => {
  test('a dry run of an INI inventory answers every host with its address, user, tags and jump hosts, and changes nothing', async () => {
    const res = await importAs(ops, { format: 'ansible-ini', source: 'prod-inventory', content: fixture('prod.ini'), dry_run: true });
    expect(res.status).toBe(200);
    const { data } = res.body;
    const hop = { via: ['bastion1'], via_ids: [null] };
    expect(data.add).toEqual([
      { id: null, title: 'bastion1', host: '203.0.113.10', port: 22, username: 'jump', tags: [], via: [], via_ids: [], line: 2 },
      { id: null, title: 'web01.example.com', host: 'web01.example.com', port: 22, username: 'deploy', tags: ['eu', 'web'], ...hop, line: 5 },
      { id: null, title: 'web02.example.com', host: 'web02.example.com', port: 22, username: 'deploy', tags: ['eu', 'web'], ...hop, line: 5 },
      { id: null, title: 'web03.example.com', host: 'web03.example.com', port: 22, username: 'deploy', tags: ['eu', 'web'], ...hop, line: 5 },
      { id: null, title: 'db-a.example.com', host: 'db-a.example.com', port: 2222, username: 'postgres', tags: ['eu', 'db'], ...hop, line: 8 },
      { id: null, title: 'db-b.example.com', host: 'db-b.example.com', port: 2222, username: 'postgres', tags: ['eu', 'db'], ...hop, line: 8 },
      { id: null, title: 'cache1.example.com', host: '10.0.3.5', port: 22, username: 'deploy', tags: ['cache', 'legacy_boxes'], via: [], via_ids: [], line: 11 },
    ]);
    expect(data).toMatchObject({ dry_run: true, source: 'prod-inventory', change: [], unchanged: [], missing: [], counts: { add: 7, change: 0, unchanged: 0, missing: 0 }, verification: null });
    expect(data.warnings).toEqual([expect.stringMatching(/^line 11: group "_retired" is not a tag word/)]);
    expect(await allServers(ops)).toEqual([]);
  });

  test('the YAML form of the same inventory gives the same hosts', async () => {
    const ini = (await importAs(ops, { format: 'ansible-ini', source: 'prod-inventory', content: fixture('prod.ini'), dry_run: true })).body.data;
    const yaml = await importAs(ops, { format: 'ansible-yaml', source: 'prod-inventory', content: fixture('prod.yml'), dry_run: true });
    expect(yaml.status).toBe(200);
    const withoutLines = (hosts: Array<Record<string, unknown>>) => hosts.map(({ line: _line, ...host }) => host);
    expect(withoutLines(yaml.body.data.add)).toEqual(withoutLines(ini.add));
    expect(yaml.body.data.add.map((h: { line: number }) => h.line)).toEqual([6, 16, 16, 16, 19, 19, 24]);
  });

  test('an ssh config: Host * defaults apply, wildcard patterns are not hosts, Include and Match are skipped with a warning naming the line', async () => {
    const res = await importAs(ops, { format: 'ssh-config', source: 'laptop', content: fixture('ssh_config'), dry_run: true });
    expect(res.status).toBe(200);
    expect(res.body.data.add).toEqual([
      { id: null, title: 'bastion', host: '203.0.113.10', port: 22, username: 'jump', tags: [], via: [], via_ids: [], line: 4 },
      { id: null, title: 'app1', host: 'app1.internal.example.com', port: 22, username: 'deploy', tags: [], via: ['bastion'], via_ids: [null], line: 8 },
      { id: null, title: 'app2', host: 'app2.internal.example.com', port: 22, username: 'deploy', tags: [], via: ['bastion'], via_ids: [null], line: 8 },
      { id: null, title: 'legacy', host: '10.0.9.9', port: 2200, username: 'root', tags: [], via: [], via_ids: [], line: 12 },
    ]);
    expect(res.body.data.warnings).toEqual([
      'line 2: Include is not followed (an import reads only the content sent): skipped',
      'line 17: Match block ignored (only Host blocks are read)',
    ]);
  });

  test('a broken file, an unknown jump host, a missing dry_run: 422 naming the line and why, nothing changed', async () => {
    const cases: Array<[object, string]> = [
      [{ format: 'ansible-ini', content: fixture('bad-range.ini') }, 'line 3: the range [10:02] ends before it starts'],
      [{ format: 'ansible-yaml', content: fixture('broken.yml') }, 'line 6: Flow sequence in block collection must be sufficiently indented and end with a ]'],
      [{ format: 'ansible-ini', content: '[web]\nweb1 ansible_port=http\n' }, 'line 2: ansible_port of web1 is "http", not a port (1 to 65535)'],
      [{ format: 'ansible-ini', content: '[web]\nweb1 ansible_user=d ansible_ssh_common_args="-J nowhere"\n' }, 'line 2: jump host "nowhere" of web1 is neither a host of this inventory nor a server of the organization'],
      [{ format: 'ssh-config', content: 'Host a\n  HostName 10.0.0.1\n' }, 'line 1: a has no user: give ansible_user (or User), or defaults.username'],
    ];
    for (const [body, message] of cases) {
      for (const dry_run of [true, false]) {
        const res = await importAs(ops, { source: 'broken', dry_run, ...body, defaults: { auth_method: 'password', password: 'pw' } });
        expect([res.status, res.body.error.code, res.body.error.details]).toEqual([422, 'validation_failed', [{ path: 'content', message }]]);
      }
    }
    const noDryRun = await importAs(ops, { format: 'ansible-ini', source: 'x', content: '[web]\nweb1 ansible_user=d\n' });
    expect([noDryRun.status, JSON.stringify(noDryRun.body.error.details)]).toEqual([422, expect.stringContaining('dry_run is required')]);
    expect(await allServers(ops)).toEqual([]);
  });

  test('a read-only token cannot import, not even a dry run', async () => {
    const viewer = await addPerson(bosun, ops, 'vera', 'viewer');
    const res = await importAs(viewer, { format: 'ansible-ini', source: 'prod-inventory', content: fixture('prod.ini'), dry_run: true });
    expect([res.status, res.body.error.code]).toEqual([403, 'forbidden']);
  });

  test('applied: servers added and verified; a re-import with a host gone quarantines it, and tag targeting skips it until the tag is removed', async () => {
    // The neighbouring organization has a server at web1's address: never matched, never touched.
    const neighbours = await other.addServer({ host: '127.0.0.10', title: 'their-web', tags: ['theirs'] });
    const { privateKey } = bosun.sshd;
    const defaults = { auth_method: 'private_key', private_key: privateKey, tags: ['imported'] };

    const applied = await importAs(ops, { format: 'ansible-ini', source: 'fleet', content: fleetInventory(['web1', 'web2', 'web3']), defaults, dry_run: false });
    expect(applied.status).toBe(200);
    expect(JSON.stringify(applied.body)).not.toContain(privateKey.split('\n')[1]!);
    const { data } = applied.body;
    expect(data.counts).toEqual({ add: 4, change: 0, unchanged: 0, missing: 0 });
    expect(data.verification).toEqual({ workflow_id: expect.stringMatching(/^inventory-verify-/), servers: 4, concurrency: 8 });
    const ids = Object.fromEntries(data.add.map((a: { title: string; id: string }) => [a.title, a.id]));
    await eventually(async () => (await allServers(ops)).map((s: { status: string }) => s.status), (statuses) => statuses.length === 4 && statuses.every((s: string) => s === 'verified'));
    expect((await ops.getServer(ids.web1)).host_key_fingerprint).toMatch(/^SHA256:/);
    expect((await ops.getServer(ids.db1)).tags).toEqual(['imported', 'prod', 'db']);

    const again = (await importAs(ops, { format: 'ansible-ini', source: 'fleet', content: fleetInventory(['web1', 'web2', 'web3']), defaults, dry_run: true })).body.data;
    expect(again.counts).toEqual({ add: 0, change: 0, unchanged: 4, missing: 0 });

    const deployment = await ops.define({ targets: { tags: ['web'] }, steps: [{ name: 'hi', command: 'echo hi' }] });
    const targets = async () => (await ops.plan(deployment.id)).targets.map((t: { server_id: string }) => t.server_id).sort();
    expect(await targets()).toEqual([ids.web1, ids.web2, ids.web3].sort());

    // web3 leaves the inventory; db1 joins [web]; a tag a person added to web2, and db1's new title, survive the re-import.
    await ops.patchServer(ids.web2, { tags: ['imported', 'web', 'prod', 'pinned'] });
    await ops.patchServer(ids.db1, { title: 'db1 (primary)' });
    const next = fleetInventory(['web1', 'web2'], '[web]\ndb1');
    const preview = await importAs(ops, { format: 'ansible-ini', source: 'fleet', content: next, defaults, dry_run: true });
    expect(preview.body.data).toMatchObject({
      add: [],
      change: [{ id: ids.db1, title: 'db1 (primary)', fields: { tags: { from: ['imported', 'prod', 'db'], to: ['imported', 'prod', 'web', 'db'] } } }],
      unchanged: [{ id: ids.web1, title: 'web1' }, { id: ids.web2, title: 'web2' }],
      missing: [{ id: ids.web3, title: 'web3', host: '127.0.0.12' }],
    });
    expect((await ops.getServer(ids.web3)).tags).not.toContain('quarantined');

    const reimported = await importAs(ops, { format: 'ansible-ini', source: 'fleet', content: next, defaults, dry_run: false });
    expect(reimported.body.data.counts).toEqual({ add: 0, change: 1, unchanged: 2, missing: 1 });
    expect((await ops.getServer(ids.web3)).tags).toEqual(['imported', 'prod', 'web', 'quarantined']);
    expect((await ops.getServer(ids.web2)).tags).toEqual(['imported', 'web', 'prod', 'pinned']);
    expect(await ops.getServer(ids.db1)).toMatchObject({ title: 'db1 (primary)', tags: ['imported', 'prod', 'web', 'db'] });
    expect(await targets()).toEqual([ids.web1, ids.web2, ids.db1].sort());
    const run = await ops.waitForRun(deployment.id, (await ops.trigger(deployment.id)).run_id);
    expect(run.targets.map((t: { server_id: string }) => t.server_id).sort()).toEqual([ids.web1, ids.web2, ids.db1].sort());

    // Back in the inventory, it stays quarantined until a person says otherwise.
    const back = (await importAs(ops, { format: 'ansible-ini', source: 'fleet', content: fleetInventory(['web1', 'web2', 'web3'], '[web]\ndb1'), defaults, dry_run: true })).body.data;
    expect(back.warnings).toEqual(['line 4: web3 is quarantined: it stays so until the tag is removed (PATCH its tags)']);

    // Released by a person: targeted again.
    await ops.patchServer(ids.web3, { tags: ['imported', 'web', 'prod'] });
    expect(await targets()).toEqual([ids.web1, ids.web2, ids.web3, ids.db1].sort());

    expect(await ops.getServer(ids.web1)).toMatchObject({ host: '127.0.0.10' });
    expect(await other.getServer(neighbours)).toMatchObject({ title: 'their-web', tags: ['theirs'], host: '127.0.0.10' });
    const theirs = (await importAs(other, { format: 'ansible-ini', source: 'fleet', content: next, dry_run: true })).body.data;
    expect(theirs.missing).toEqual([]);
    expect(theirs.change).toEqual([expect.objectContaining({ id: neighbours, fields: expect.objectContaining({ title: { from: 'their-web', to: 'web1' } }) })]);
  });
});
