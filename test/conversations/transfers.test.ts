import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer, conversationEnded } from '../support/http';
import { eventually } from '../support/eventually';
import { userWithToken } from '../support/client';
import { connectSocket } from '../support/socket';
import { sharedFolder, treeDigest } from '../support/trees';

type Step = { status: string; execution_log: string; title: string; command: string; risk: string; target: string; server_id: string; transfer: Record<string, string | null> | null };
type Conversation = { id: string; status: string; steps: Step[] };

describe('migration plans move data between their servers through the worker', () => {
  let bosun: SharedBosun;
  let token: string;
  let source: string;
  let target: string;
  let planId: string;
  // The test's two "servers" share this machine's filesystem: each side works in its own folder.
  const work = sharedFolder('bosun-transfer-');

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('movers');
    source = await userWithToken(bosun, token).addServer({ host: '127.0.0.2' });
    target = await userWithToken(bosun, token).addServer({ host: '127.0.0.3' });
    const plan = await bosun.api.post('/api/v1/migration-plans').set(bearer(token)).send({ title: 'app to new box', source_server_id: source, target_server_id: target });
    planId = plan.body.data.id;
  });
  afterAll(() => bosun.stop());

  const say = async (message: string) => {
    const res = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'migration_plan', chatable_id: planId, message });
    expect(res.status).toBe(201);
    return eventually(
      async () => (await bosun.api.get(`/api/v1/conversations/${res.body.data.id}`).set(bearer(token))).body.data as Conversation,
      conversationEnded,
      60_000,
    );
  };

  test('a directory tree is copied with its links, empty folders and odd names, verified by checksums; copying again moves nothing', async () => {
    const from = path.join(work, 'www');
    mkdirSync(path.join(from, 'static/css'), { recursive: true });
    mkdirSync(path.join(from, 'empty'));
    writeFileSync(path.join(from, 'index.html'), '<h1>hello</h1>\n');
    writeFileSync(path.join(from, 'static/css/site.css'), 'body { color: red }\n'.repeat(5000));
    writeFileSync(path.join(from, 'name with spaces & ünïcode.txt'), 'odd\n');
    writeFileSync(path.join(from, 'blob.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
    symlinkSync('index.html', path.join(from, 'current'));
    const to = path.join(work, 'srv/www');

    const done = await say(`copy ${from} to the target at ${to}`);
    expect(done.status).toBe('completed');
    const [step] = done.steps;
    expect(step).toMatchObject({ status: 'completed', target: 'target', server_id: target, risk: 'change', transfer: { kind: 'copy', source_server_id: source, from, to } });
    expect(step!.execution_log).toMatch(/source .*: 4 files, 3\.1 MiB/);
    expect(step!.execution_log).toMatch(/copying 4 files .* in one tar stream/);
    expect(step!.execution_log).toMatch(/verified: 4 files, 3\.1 MiB, identical on both servers/);
    expect(treeDigest(to)).toEqual(treeDigest(from));
    expect(readlinkSync(path.join(to, 'current'))).toBe('index.html');
    expect(statSync(path.join(to, 'empty')).isDirectory()).toBe(true);

    const again = await say(`copy ${from} to the target at ${to}`);
    expect(again.status).toBe('completed');
    expect(again.steps[0]!.execution_log).toMatch(/already on the target, identical \(size and mtime\): 4 files/);
    expect(again.steps[0]!.execution_log).not.toMatch(/copying \d+ files/);

    // Every command the copy ran is in the audit trail, on its own server, with its exit.
    type Entry = { server_id: string; outcome: string; details: { command: string; exit_code: number | null; conversation_id: string } };
    const commandsOf = async (server: string) =>
      (((await bosun.api.get(`/api/v1/audit?action=command.run&server=${server}&per_page=100`).set(bearer(token))).body.data ?? []) as Entry[]).filter((e) => e.details.conversation_id === done.id);
    // The chainer moves each entry into the trail once its exit is known, in the order the exits came:
    // wait for the last of each side's commands (the verification's checksums), not the first.
    const has = (entries: Entry[], test: (command: string) => boolean) => entries.some((e) => test(e.details.command));
    const checksums = (command: string) => command.includes('xargs -0 -r sha256sum');
    const onTarget = await eventually(
      () => commandsOf(target),
      (entries) => has(entries, (c) => /^tar -C .* -xpf -$/.test(c)) && has(entries, (c) => c.startsWith('mkdir -p -- ')) && has(entries, checksums),
      60_000,
    );
    const onSource = await eventually(() => commandsOf(source), (entries) => has(entries, (c) => /^tar -C .* -cf -$/.test(c)) && has(entries, checksums), 60_000);
    for (const [entries, server] of [[onTarget, target], [onSource, source]] as const) {
      expect(entries.every((e) => e.server_id === server && e.outcome === 'ok' && e.details.exit_code === 0)).toBe(true);
    }
    expect(onTarget.map((e) => e.details.command)).toEqual(expect.arrayContaining([expect.stringMatching(/^mkdir -p -- /), expect.stringContaining('xargs -0 -r sha256sum')]));
    expect(onSource.map((e) => e.details.command)).toEqual(expect.arrayContaining([expect.stringMatching(/^tar -C .* -cf -$/), expect.stringContaining('xargs -0 -r sha256sum')]));
  });

  test('a SQLite database is dumped on the source and restored on the target', async () => {
    const db = path.join(work, 'app.db');
    execFileSync('sqlite3', [db, "create table users(id integer primary key, name text); insert into users(name) values ('ada'), ('grace');"]);
    const restored = path.join(work, 'restored/app.db');
    const done = await say(`dump and restore the sqlite database ${db} to the target at ${restored}`);
    expect(done.status).toBe('completed');
    expect(done.steps[0]!.transfer).toMatchObject({ kind: 'pipe', source_command: `sqlite3 ${db} .dump` });
    expect(done.steps[0]!.execution_log).toMatch(/moved [\d.]+ (B|KiB) from the source to the target/);
    expect(execFileSync('sqlite3', [restored, 'select name from users order by id'], { encoding: 'utf8' })).toBe('ada\ngrace\n');
  });

  test('the installed packages of both servers are compared', async () => {
    const done = await say('compare the installed packages of both servers');
    expect(done.status).toBe('completed');
    expect(done.steps[0]!.risk).toBe('read');
    // Both "servers" are this machine: the lists agree.
    expect(done.steps[0]!.execution_log).toMatch(/^\d+ lines on both servers\nonly on the source: none\nonly on the target: none\n$/);
  });

  test('a copy whose source is missing fails with why; a copy onto / is refused and never runs', async () => {
    const missing = await say(`copy ${path.join(work, 'nope')} to the target at ${path.join(work, 'nope-copy')}`);
    expect([missing.status, missing.steps]).toMatchObject(['failed', [{ status: 'failed' }]]);
    expect(missing.steps[0]!.execution_log).toMatch(/--- failed: Listing .*nope on the source failed \(exit \d+\): .*(can't cd|No such file or directory)/);
    // Nothing was left behind on the target.
    expect(existsSync(path.join(work, 'nope-copy'))).toBe(false);

    const onto = await say(`copy ${path.join(work, 'www')} to / on the target`);
    expect(onto.status).toBe('failed');
    expect(onto.steps[0]!.execution_log).toContain('Copying from or onto / is refused');
    const sneaky = await say(`copy ${path.join(work, 'www')} to the target at /tmp/../`);
    expect(sneaky.steps[0]!.execution_log).toContain('Copying from or onto / is refused');
    const system = await say(`copy ${path.join(work, 'www')} to the target at /etc`);
    expect([system.status, system.steps[0]!.risk]).toEqual(['failed', 'destructive']);
    expect(system.steps[0]!.execution_log).toContain('a copy onto /etc, a system directory');
    expect(readFileSync(path.join(work, 'www/index.html'), 'utf8')).toBe('<h1>hello</h1>\n');
  });

  test('in a conversation about one server, a copy between servers is explained, not attempted', async () => {
    const res = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: source, message: `copy ${work} to the target` });
    const done = await eventually(
      async () => (await bosun.api.get(`/api/v1/conversations/${res.body.data.id}`).set(bearer(token))).body.data as Conversation,
      (c) => c.status === 'failed',
    );
    expect(done.steps[0]!.execution_log).toContain('needs a migration plan');
  });

  test('another organization sees none of it: every conversation and migration plan route answers 404, its socket subscription too', async () => {
    const mine = await say('compare the installed packages');
    const stepId = (await bosun.api.get(`/api/v1/conversations/${mine.id}`).set(bearer(token))).body.data.steps[0].id;
    const stranger = await bosun.token('strangers');
    const as = (method: 'get' | 'post' | 'delete', route: string, body?: object) => {
      const call = bosun.api[method](`/api/v1${route}`).set(bearer(stranger));
      return body ? call.send(body) : call;
    };
    const attempts = [
      await as('get', `/conversations/${mine.id}`),
      await as('post', `/conversations/${mine.id}/messages`, { message: 'uptime' }),
      await as('post', `/conversations/${mine.id}/cancel`),
      await as('post', `/conversations/${mine.id}/steps/${stepId}/approve`),
      await as('post', `/conversations/${mine.id}/steps/${stepId}/reject`),
      await as('post', '/conversations', { chatable_type: 'migration_plan', chatable_id: planId, message: 'uptime' }),
      await as('get', `/migration-plans/${planId}`),
      await as('delete', `/migration-plans/${planId}`),
    ];
    expect(attempts.map((r) => [r.status, r.body.error?.code])).toEqual(attempts.map(() => [404, 'not_found']));
    expect((await as('post', '/migration-plans', { title: 'theirs', source_server_id: source, target_server_id: target })).status).toBe(422);
    expect((await as('get', '/conversations')).body.meta.total).toBe(0);
    expect((await as('get', `/conversations?chatable_type=migration_plan&chatable_id=${planId}`)).body.data).toEqual([]);
    expect((await as('get', '/migration-plans')).body.meta.total).toBe(0);
    const socket = await connectSocket(bosun.url, stranger);
    try {
      expect(await socket.emitWithAck('subscribe_conversation', { conversation_id: mine.id })).toMatchObject({ ok: false, error: { code: 'not_found' } });
      expect(await socket.emitWithAck('subscribe_conversation', { conversation_id: mine.id, step_ids: [stepId] })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    } finally {
      socket.close();
    }
    // And the owner's data is untouched.
    expect((await bosun.api.get(`/api/v1/migration-plans/${planId}`).set(bearer(token))).status).toBe(200);
    expect((await bosun.api.get(`/api/v1/conversations/${mine.id}`).set(bearer(token))).body.data.messages).toHaveLength(1);
  });
});
