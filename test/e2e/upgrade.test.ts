import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bearer } from '../support/bosun';
import { BosunProcess, embeddedStackEnv, REPO, runCliFromSources } from '../support/processes';
import supertest from 'supertest';

/**
 * The version before people and roles, as a clean clone has it in its history: the parent of the
 * commit that added them. A `.bosun/` it made is what an upgrading user brings.
 */
function previousVersion(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).trim();
  const added = git('log', '--diff-filter=A', '--format=%H', '--', 'src/domain/access/roles.ts').split('\n').at(-1)!;
  const checkout = mkdtempSync(path.join(os.tmpdir(), 'bosun-previous-'));
  const tarball = path.join(checkout, 'previous.tar');
  git('archive', '-o', tarball, `${added}^`, 'src', 'workflows', 'activities', 'package.json', 'tsconfig.json', 'tsconfig.build.json');
  execFileSync('tar', ['-x', '-f', tarball, '-C', checkout]);
  symlinkSync(path.join(REPO, 'node_modules'), path.join(checkout, 'node_modules'));
  return checkout;
}

describe('upgrading a data directory made by the version before people and roles', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-upgrade-'));
  let previous: string;
  const running: BosunProcess[] = [];
  beforeAll(() => {
    previous = previousVersion();
    mkdirSync(path.join(previous, '.bosun'), { recursive: true });
  });
  afterAll(async () => {
    await Promise.all(running.map((b) => b.stop('SIGINT')));
    if (previous) rmSync(previous, { recursive: true, force: true });
  }, 60_000);

  test('every old token works with the rights it had, as a service account of its name; nothing gains access', async () => {
    const env = await embeddedStackEnv(home);
    // The previous version: its first start prints the admin token; its CLI makes a CI token and a read-only one.
    const old = new BosunProcess(env, [], previous);
    running.push(old);
    await old.ready();
    const admin = old.firstToken!;
    const { MONGOD_PATH: _m, ...cliEnv } = env;
    const made = async (name: string, scopes: string) => {
      const created = await runCliFromSources(['tokens', 'create', '--org', 'default', '--name', name, '--scopes', scopes], cliEnv, previous);
      expect([name, created.code, created.stdout]).toEqual([name, 0, expect.stringMatching(/^bsn_/)]);
      return created.stdout.trim();
    };
    const ci = await made('ci-web', 'read,deployments:run');
    const reader = await made('auditor', 'read');
    expect(await old.stop('SIGINT')).toBe(0);

    // The new version on the same data directory.
    const upgraded = new BosunProcess({ ...env, LOG_LEVEL: 'info' });
    running.push(upgraded);
    const base = (await upgraded.ready()).replace(/\/api\/v1$/, '');
    expect(upgraded.firstToken).toBeUndefined();
    expect(upgraded.stdout).toMatch(/"tokens":3,.*"msg":"tokens of an older version now belong to service accounts of their names"/);
    const api = supertest(base);
    const me = async (token: string) => (await api.get('/api/v1/me').set(bearer(token))).body.data;

    // Each token is its service account's now, its scopes expressed as roles.
    expect(await me(ci)).toMatchObject({ identity: { type: 'service_account', name: 'ci-web' }, token: { name: 'ci-web', scopes: ['read', 'deployments:run'] } });
    expect((await me(ci)).bindings.map((b: { role: string; servers: unknown }) => [b.role, b.servers]).sort()).toEqual([['operator', null], ['viewer', null]]);
    expect(await me(reader)).toMatchObject({ identity: { type: 'service_account', name: 'auditor' }, bindings: [{ role: 'viewer', servers: null, deployments: null }] });
    expect(await me(admin)).toMatchObject({ identity: { type: 'service_account', name: 'admin' }, bindings: [{ role: 'admin' }] });

    // The same rights as before: the administrator still administers; the CI token triggers and reads...
    const server = await api.post('/api/v1/servers').set(bearer(admin)).send({ title: 'web-1', host: '127.0.0.9', port: 1, username: 'deploy', auth_method: 'password', password: 'secret', tags: ['web'] });
    expect(server.status).toBe(201);
    const deployment = await api.post('/api/v1/deployments').set(bearer(admin)).send({ name: 'release', server_id: server.body.data.id, steps: [{ name: 'a', command: 'true' }] });
    expect(deployment.status).toBe(201);
    expect((await api.get('/api/v1/servers').set(bearer(ci))).status).toBe(200);
    // (The server is not verified: the trigger is refused for that, past every permission check.)
    expect((await api.post(`/api/v1/deployments/${deployment.body.data.id}/run`).set(bearer(ci))).status).toBe(409);
    // ...and gains nothing its scopes never allowed, although its operator role would.
    const conversation = await api.post('/api/v1/conversations').set(bearer(ci)).send({ chatable_type: 'server', chatable_id: server.body.data.id, message: 'uptime' });
    expect([conversation.status, conversation.body.error.message]).toEqual([403, 'This token lacks the "conversations:write" scope']);
    expect((await api.delete(`/api/v1/servers/${server.body.data.id}`).set(bearer(reader))).status).toBe(403);
    expect((await api.get('/api/v1/people').set(bearer(ci))).status).toBe(403);
    expect((await api.get('/api/v1/people').set(bearer(admin))).status).toBe(200);

    // A second start finds nothing left to adopt.
    expect(await upgraded.stop('SIGINT')).toBe(0);
    const again = new BosunProcess({ ...env, LOG_LEVEL: 'info' });
    running.push(again);
    await again.ready();
    expect(again.stdout).not.toContain('now belong to service accounts');
    expect((await me(ci)).identity.name).toBe('ci-web');
    expect(await again.stop('SIGINT')).toBe(0);
  }, 600_000);
});
