import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { eventually } from '../support/eventually';
import { runCli } from '../support/processes';

/*
 * `bosun servers import FILE`: the diff as a table, the format told by the file name, a broken
 * file refused with its line (exit 1), and an apply that adds a verified server.
 */

const FIXTURES = path.join(__dirname, '../fixtures/inventories');

describe('bosun servers import', () => {
  let bosun: SharedBosun;
  let env: NodeJS.ProcessEnv;
  let token: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'bosun-import-'));
  const servers = async () => (await bosun.api.get('/api/v1/servers').set(bearer(token))).body.data as Array<{ title: string; status: string; tags: string[] }>;

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('cli-import');
    env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };
  }, 120_000);
  afterAll(() => bosun?.stop());

  test('--dry-run prints the diff as a table and changes nothing; warnings go to stderr', async () => {
    const res = await runCli(['servers', 'import', path.join(FIXTURES, 'ssh_config'), '--dry-run'], env);
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')).toEqual([
      'ACTION      TITLE    DETAILS',
      'add         bastion  jump@203.0.113.10:22  tags -',
      'add         app1     deploy@app1.internal.example.com:22  tags -  via bastion',
      'add         app2     deploy@app2.internal.example.com:22  tags -  via bastion',
      'add         legacy   root@10.0.9.9:2200  tags -',
      'dry run, nothing changed: 4 to add, 0 to change, 0 unchanged, 0 missing (source ssh_config)',
      '',
    ]);
    expect(res.stderr).toContain('warning: line 17: Match block ignored');
    expect(await servers()).toEqual([]);
  });

  test('a name that says no format is a usage error (exit 2); a broken file is refused with its line (exit 1)', async () => {
    const unknown = path.join(dir, 'hosts.txt');
    writeFileSync(unknown, 'web1\n');
    const bad = await runCli(['servers', 'import', unknown, '--dry-run'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('give --format')]);
    const broken = await runCli(['servers', 'import', path.join(FIXTURES, 'bad-range.ini'), '--dry-run'], env);
    expect([broken.code, broken.stderr]).toEqual([1, expect.stringContaining('line 3: the range [10:02] ends before it starts')]);
    expect(await servers()).toEqual([]);
  });

  test('without --dry-run the import is applied: the server added is verified on the sshd', async () => {
    const { port, username, privateKey } = bosun.sshd;
    const inventory = path.join(dir, 'hosts');
    writeFileSync(inventory, `[web]\nweb1 ansible_host=127.0.0.10 ansible_port=${port}\n`);
    const key = path.join(dir, 'id_test');
    writeFileSync(key, privateKey, { mode: 0o600 });
    const res = await runCli(['servers', 'import', inventory, '--source', 'lab', '--username', username, '--key-file', key, '--tag', 'lab'], env);
    expect([res.code, res.stderr]).toEqual([0, '']);
    expect(res.stdout).toContain('applied: 1 to add, 0 to change, 0 unchanged, 0 missing (source lab)');
    expect(res.stdout).toContain('verifying 1 servers, 8 at a time');
    const [server] = await eventually(servers, (list) => list[0]?.status === 'verified');
    expect(server).toMatchObject({ title: 'web1', tags: ['lab', 'web'] });
  });
});
