import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { bearer, startBosun, type Bosun } from '../support/bosun';
import { runCli } from '../support/processes';

describe('bosun tokens', () => {
  let bosun: Bosun;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    bosun = await startBosun();
    env = { ...process.env, MONGODB_URI: bosun.mongoUri, BOSUN_HOME: mkdtempSync(path.join(os.tmpdir(), 'bosun-cli-')) };
  });
  afterAll(() => bosun.stop());

  test('create prints the token alone on stdout; it works, with exactly its scopes', async () => {
    const created = await runCli(['tokens', 'create', '--org', 'initech', '--name', 'ci', '--scopes', 'read'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^bsn_[A-Za-z0-9_-]{43}\n$/);
    const token = created.stdout.trim();
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    expect((await bosun.api.post('/api/v1/servers').set(bearer(token)).send({})).status).toBe(403);
  });

  test('only the SHA-256 of a token is stored', async () => {
    const token = (await runCli(['tokens', 'create', '--org', 'initech', '--name', 'hashed'], env)).stdout.trim();
    const stored = await mongoose.connection.db!.collection('apitokens').findOne({ name: 'hashed' });
    expect(stored!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(token.slice(4));
  });

  test('list shows names, prefixes and scopes, never the token', async () => {
    const token = (await runCli(['tokens', 'create', '--org', 'listing', '--name', 'deployer', '--scopes', 'read,servers:write'], env)).stdout.trim();
    const listed = await runCli(['tokens', 'list', '--org', 'listing', '--json'], env);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout);
    expect(rows).toEqual([expect.objectContaining({ name: 'deployer', scopes: ['read', 'servers:write'], revoked_at: null })]);
    expect(listed.stdout).not.toContain(token);
    expect(token.startsWith(rows[0].prefix)).toBe(true);
    const table = await runCli(['tokens', 'list', '--org', 'listing'], env);
    expect(table.stdout).toMatch(/^NAME\tPREFIX/);
    expect(table.stdout).toContain('deployer');
  });

  test('revoke takes effect at once, and the name can be reused', async () => {
    const token = (await runCli(['tokens', 'create', '--org', 'revoking', '--name', 'old'], env)).stdout.trim();
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(200);
    const revoked = await runCli(['tokens', 'revoke', '--org', 'revoking', '--name', 'old'], env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe('');
    expect((await bosun.api.get('/api/v1/servers').set(bearer(token))).status).toBe(401);
    expect((await runCli(['tokens', 'create', '--org', 'revoking', '--name', 'old'], env)).code).toBe(0);
  });

  test('a bad organization slug is a usage error: one line on stderr, exit 2, nothing created', async () => {
    const badOrg = await runCli(['tokens', 'create', '--org', 'Bad_Org', '--name', 'x'], env);
    expect(badOrg.stdout).toBe('');
    expect(badOrg.stderr).toBe('bosun: Invalid organization "Bad_Org": lowercase letters, digits and dashes, at most 64 (e.g. acme-ops)\n');
    expect(badOrg.code).toBe(2);
    expect(await mongoose.connection.db!.collection('organizations').countDocuments({ slug: 'Bad_Org' })).toBe(0);
  });

  test('mistakes get a one-line reason on stderr and a non-zero exit', async () => {
    const duplicate = await runCli(['tokens', 'create', '--org', 'initech', '--name', 'ci'], env);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe('');
    expect(duplicate.stderr).toContain('already has an active token named "ci"');

    // A bad argument is a usage error: one line, exit 2, nothing created.
    const badScope = await runCli(['tokens', 'create', '--org', 'initech', '--name', 'x', '--scopes', 'root'], env);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toBe('bosun: Unknown scope(s): root. Known scopes: read, servers:write, deployments:write, deployments:run, conversations:write, approve, audit:read, admin\n');

    const badName = await runCli(['tokens', 'create', '--org', 'initech', '--name', 'two words'], env);
    expect(badName.code).toBe(2);
    expect(badName.stderr.trim().split('\n')).toHaveLength(1);

    const badExpiry = await runCli(['tokens', 'create', '--org', 'initech', '--name', 'x', '--expires-in', 'soon'], env);
    expect(badExpiry.code).toBe(2);
    expect(badExpiry.stderr).toMatch(/^bosun: Invalid duration "soon"/);

    const missing = await runCli(['tokens', 'create', '--org', 'initech'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("error: required option '--name <name>' not specified\n");

    const unknownOrg = await runCli(['tokens', 'revoke', '--org', 'nobody', '--name', 'x'], env);
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toContain('No organization "nobody"');
  });

  test('without MONGODB_URI and no running Bosun it says how to fix that', async () => {
    const { MONGODB_URI: _unused, ...rest } = env;
    const result = await runCli(['tokens', 'list', '--org', 'x'], rest);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No running Bosun found');
    expect(result.stderr).toContain('npm start');
  });
});
