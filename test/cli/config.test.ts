import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { runCli } from '../support/processes';
import { userWithToken } from '../support/client';

/** `bosun config plan|apply|export|schema|sources`: a repository directory planned and applied from a terminal, as CI does. */
describe('bosun config: definitions kept in Git, from a terminal', () => {
  let bosun: SharedBosun;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  const run = async (args: string[]) => {
    const result = await runCli(args, env);
    return { ...result, stderr: result.stderr.replace(/^bosun: compiling to dist\/.*\n/m, '') };
  };
  const deployment = (command: string) => `kind: Deployment\nname: web-release\nspec:\n  server: web-1\n  steps:\n    - name: deploy\n      command: ${JSON.stringify(command)}\n`;

  beforeAll(async () => {
    bosun = await sharedBosun();
    const token = await bosun.token('cli-config');
    await userWithToken(bosun, token).addServer({ title: 'web-1', host: '127.0.0.2' });
    env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token, BOSUN_CONFIG_SOURCE: 'platform-repo' };
    dir = mkdtempSync(path.join(tmpdir(), 'bosun-config-cli-'));
    mkdirSync(path.join(dir, 'deploy'));
    writeFileSync(path.join(dir, 'deploy', 'web.yaml'), deployment('echo v1'));
    writeFileSync(path.join(dir, 'README.md'), 'not a definition');
  });
  afterAll(() => bosun.stop());

  test('plan --exit-code says 2 for changes, apply applies, the same plan then says 0; errors say 1 with file:line:column', async () => {
    const planned = await run(['config', 'plan', dir, '--exit-code']);
    expect([planned.code, planned.stderr]).toEqual([2, '']);
    expect(planned.stdout).toMatch(/^\+ Deployment web-release {2}\(deploy\/web\.yaml\)\nPlan: 1 to create, 0 to change, 0 to delete, 0 unchanged\.\nplan_hash: [0-9a-f]{64}\n$/);
    const hash = /plan_hash: ([0-9a-f]{64})/.exec(planned.stdout)![1]!;

    const applied = await run(['config', 'apply', dir, '--plan-hash', hash]);
    expect([applied.code, applied.stderr, applied.stdout]).toEqual([0, '', '+ Deployment web-release  (deploy/web.yaml)\nApplied: 1 created, 0 changed, 0 deleted.\n']);
    expect((await run(['config', 'plan', dir, '--exit-code'])).code).toBe(0);

    writeFileSync(path.join(dir, 'deploy', 'web.yaml'), deployment('echo v2'));
    const changed = await run(['config', 'plan', dir]);
    expect([changed.code, changed.stdout.split('\n').slice(0, 2)]).toEqual([0, ['~ Deployment web-release  (deploy/web.yaml)', '    steps[0].command: "echo v1" → "echo v2"']]);
    // The reviewed plan is not the plan any more once the files changed: refused, nothing applied.
    const stale = await run(['config', 'apply', dir, '--plan-hash', hash]);
    expect([stale.code, stale.stderr]).toEqual([1, expect.stringMatching(/^bosun: The plan of these files is not the one reviewed/)]);

    writeFileSync(path.join(dir, 'deploy', 'broken.yaml'), 'kind: Deployment\nname: broken\nspec:\n  server: web-9\n  steps: []\n');
    const broken = await run(['config', 'plan', dir, '--exit-code']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('error: deploy/broken.yaml:4:3: server: no server titled "web-9"');
    const refused = await run(['config', 'apply', dir]);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('deploy/broken.yaml:4:3: server: no server titled "web-9"')]);
  });

  test('export writes one file per kind into a directory; schema prints the documents’ JSON Schema', async () => {
    const out = path.join(dir, 'exported');
    const exported = await run(['config', 'export', '--dir', out, '--kinds', 'Deployment']);
    expect([exported.code, exported.stderr]).toEqual([0, `Wrote deployments.yaml into ${out}\n`]);
    expect(readFileSync(path.join(out, 'deployments.yaml'), 'utf8')).toContain('name: web-release');
    const schema = JSON.parse((await run(['config', 'schema'])).stdout);
    expect(schema.oneOf.map((k: { properties: { kind: { const: string } } }) => k.properties.kind.const)).toEqual(expect.arrayContaining(['Deployment', 'Pipeline', 'Policy']));
  });

  test('sources list shows each source’s state', async () => {
    const listed = await run(['config', 'sources', 'list']);
    expect([listed.code, listed.stdout]).toEqual([0, 'NAME\tREPOSITORY\tREF\tAPPLIED\tSYNCED\tSTATE\n']);
  });
});
