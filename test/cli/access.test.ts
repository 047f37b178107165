import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { runCli } from '../support/processes';

describe('bosun whoami, people, service-accounts, teams, roles: who may do what, from a terminal', () => {
  let bosun: SharedBosun;
  let admin: NodeJS.ProcessEnv;
  const as = (token: string) => ({ ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token });
  const ok = async (args: string[], env = admin) => {
    const result = await runCli(args, env);
    // The first call after a source changed compiles the CLI once, and says so.
    const stderr = result.stderr.replace(/^bosun: compiling to dist\/.*\n/m, '');
    expect([args.join(' '), result.code, stderr]).toEqual([args.join(' '), 0, '']);
    return result.stdout;
  };

  beforeAll(async () => {
    bosun = await sharedBosun();
    admin = as(await bosun.token('cli-org', ['admin'], 'release-admin'));
  });
  afterAll(() => bosun.stop());

  test('an administrator sets up a CI service account limited to web servers and 20 per run; its token says so', async () => {
    expect(await ok(['whoami'])).toMatch(/^release-admin \(service account\) [0-9a-f]{24}\ntoken    release-admin \(scopes: admin\)\nrole     admin, every server, every deployment\n$/);
    await ok(['service-accounts', 'add', 'ci-web', '--description', 'the web repository’s pipeline']);
    expect(await ok(['roles', 'grant', 'operator', '--to', 'service-account:ci-web', '--tags', 'web', '--max-targets', '20'])).toMatch(/^[0-9a-f]{24}\n$/);
    const token = (await ok(['service-accounts', 'token', 'ci-web', '--name', 'pipeline'])).trim();
    expect(token).toMatch(/^bsn_/);

    const whoami = await ok(['whoami'], as(token));
    expect(whoami).toContain('ci-web (service account)');
    expect(whoami).toContain('role     operator, servers tagged web, every deployment, at most 20 per run');
    expect(JSON.parse(await ok(['whoami', '--json'], as(token)))).toMatchObject({ identity: { type: 'service_account', name: 'ci-web' }, token: { name: 'pipeline' } });

    // The account may not manage people: the API's refusal, exit 1.
    const refused = await runCli(['people', 'list'], as(token));
    expect([refused.code, refused.stderr]).toEqual([1, 'bosun: ci-web has no role that allows "admin"\n']);
  });

  test('people and teams: added, listed, a person disabled and enabled again', async () => {
    await ok(['people', 'add', 'Alice', '--email', 'alice@example.com']);
    await ok(['people', 'add', 'Bob']);
    await ok(['teams', 'add', 'web team', '--members', 'Alice,Bob', '--oidc-groups', 'web-devs']);
    expect(await ok(['teams', 'list'])).toMatch(/\tweb team\t2\tweb-devs\n/);
    await ok(['roles', 'grant', 'deployer', '--to', 'team:web team', '--tags', 'web']);
    expect(await ok(['roles', 'list'])).toContain('deployer, servers tagged web, every deployment');

    await ok(['people', 'disable', 'Bob']);
    expect(await ok(['people', 'list'])).toMatch(/\tBob\t-\tyes\n/);
    await ok(['people', 'enable', 'Bob']);
    expect(await ok(['people', 'list'])).toMatch(/\tBob\t-\tno\n/);

    const unknown = await runCli(['roles', 'grant', 'viewer', '--to', 'person:Nobody'], admin);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'bosun: No person "Nobody"\n']);
    const badRole = await runCli(['roles', 'grant', 'superuser', '--to', 'person:Alice'], admin);
    expect([badRole.code, badRole.stderr]).toEqual([1, expect.stringContaining('role: a role is one of viewer, operator, approver, deployer, server-admin, auditor, admin')]);
  });
});
