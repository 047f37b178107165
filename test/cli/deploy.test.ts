import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer } from '../support/http';
import { userWithToken } from '../support/client';
import { runCli } from '../support/processes';

describe('bosun deploy, as a CI job runs it', () => {
  let bosun: SharedBosun;
  let token: string;
  let env: NodeJS.ProcessEnv;
  let serverId: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('ci', ['read', 'deployments:run', 'deployments:write']);
    serverId = await userWithToken(bosun, await bosun.token('ci')).addServer();
    env = { ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: token };
  });
  afterAll(() => bosun.stop());

  const define = async (name: string, steps: object[]) =>
    (await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({ name, server_id: serverId, steps })).body.data.id as string;

  test('--wait streams the output in order and exits 0 on success', async () => {
    const id = await define('cli-ok', [{ name: 'one', command: 'echo alpha; sleep 0.3; echo beta' }, { name: 'two', command: 'echo gamma' }]);
    const result = await runCli(['deploy', id, '--wait'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('alpha\nbeta\ngamma\n');
    expect(result.stderr).toMatch(/Idempotency-Key: bosun-cli-/);
    expect(result.stderr).toMatch(/==> one: running[\s\S]*==> one: success[\s\S]*==> two: success/);
    expect(result.stderr).toMatch(/: success in \d+ s/);
  });

  test('exits 1 when the run fails, repeating the failed step’s exit code and last lines, and the run’s error', async () => {
    const id = await define('cli-fail', [{ name: 'boom', command: 'seq 1 30; echo trying; exit 4' }, { name: 'after', command: 'true' }]);
    const result = await runCli(['deploy', id, '--wait'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/trying\n$/);
    expect(result.stderr).toContain('==> boom: failed with exit code 4; its last lines:\n    12\n');
    expect(result.stderr).toMatch(/ {4}30\n {4}trying\nError: /);
    expect(result.stderr).not.toContain('    11\n');
    expect(result.stderr).toMatch(/Error: Step "boom" \(1\/2\) failed on srv-127\.0\.0\.1: exit code 4\n/);
    expect(result.stderr).toMatch(/: failed in \d+ s\n$/);
  });

  test('a deployment is named by its name as well as its id', async () => {
    const id = await define('release-web', [{ name: 'hello', command: 'echo by-name' }]);
    const byName = await runCli(['deploy', 'release-web', '--wait'], env);
    expect(byName.code).toBe(0);
    expect(byName.stdout).toBe('by-name\n');
    expect((await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token))).body.meta.total).toBe(1);
    const missing = await runCli(['deploy', 'no-such-deployment'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No deployment named "no-such-deployment"');
  });

  test('a name that is another deployment’s id is refused as ambiguous; a token that cannot list deployments still triggers by id', async () => {
    const first = await define('ambiguous-target', [{ name: 'a', command: 'true' }]);
    const second = await define(first, [{ name: 'b', command: 'true' }]);
    const ambiguous = await runCli(['deploy', first], env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe(`bosun: "${first}" is one deployment's id and another's name (${second}): give the id of the one you mean\n`);
    for (const id of [first, second]) expect((await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token))).body.meta.total).toBe(0);

    const runOnly = { ...env, BOSUN_TOKEN: await bosun.token('ci', ['deployments:run']) };
    const byId = await runCli(['deploy', second], runOnly);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toMatch(/^[0-9a-f]{24}\n$/);
    const byName = await runCli(['deploy', 'ambiguous-target'], runOnly);
    expect(byName.code).toBe(2);
    expect(byName.stderr).toContain('Naming a deployment by its name takes a token with the read scope');
  });

  test('without --wait it prints the run id alone; retrying with the printed key returns the same run', async () => {
    const id = await define('cli-once', [{ name: 'a', command: 'true' }]);
    const first = await runCli(['deploy', id, '--idempotency-key', 'pipeline-77-deploy'], env);
    const again = await runCli(['deploy', id, '--idempotency-key', 'pipeline-77-deploy'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^[0-9a-f]{24}\n$/);
    expect(again.stdout).toBe(first.stdout);
    expect((await bosun.api.get(`/api/v1/deployments/${id}/runs`).set(bearer(token))).body.meta.total).toBe(1);
  });

  test('--timeout gives up waiting with exit 1 and says the run goes on', async () => {
    const id = await define('cli-slow', [{ name: 'slow', command: 'sleep 20' }]);
    const result = await runCli(['deploy', id, '--wait', '--timeout', '2'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not finished after 2 s \(it goes on/);
  });

  test('usage and connection problems exit 2', async () => {
    const noEnv = await runCli(['deploy', 'x'], { ...process.env, BOSUN_URL: undefined, BOSUN_TOKEN: undefined });
    expect(noEnv.code).toBe(2);
    expect(noEnv.stderr).toContain('Set BOSUN_URL');
    const unknown = await runCli(['deploy', '000000000000000000000000'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Deployment not found');
    const unreachable = await runCli(['deploy', '000000000000000000000000'], { ...env, BOSUN_URL: 'http://127.0.0.1:1' });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('Cannot reach Bosun at http://127.0.0.1:1');
    const badTimeout = await runCli(['deploy', 'x', '--wait', '--timeout', 'soon'], env);
    expect(badTimeout.code).toBe(2);
  }, 60_000);

  test('a fleet run with --param: each server’s progress and output prefixed with its name, a per-server table, exit 1 when a target failed', async () => {
    const ops = userWithToken(bosun, await bosun.token('ci'));
    const servers = [];
    for (const [i, host] of ['127.0.0.2', '127.0.0.3', '127.0.0.4'].entries()) servers.push(await ops.addServer({ host, title: `app-${i + 1}` }));
    const here = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';
    const created = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'cli-fleet',
      targets: { server_ids: servers },
      strategy: { batch_size: 1, max_failures: 2 },
      parameters: [{ name: 'version', required: true }],
      steps: [{ name: 'show', command: `${here}; echo "v$BOSUN_PARAM_VERSION on $here"; [ "$here" != 127.0.0.3 ]` }],
    });
    expect(created.status).toBe(201);

    const result = await runCli(['deploy', 'cli-fleet', '--param', 'version=1.4.2', '--wait'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('[app-1] v1.4.2 on 127.0.0.2\n');
    expect(result.stdout).toContain('[app-2] v1.4.2 on 127.0.0.3\n');
    expect(result.stdout).toContain('[app-3] v1.4.2 on 127.0.0.4\n');
    expect(result.stderr).toMatch(/\[app-2\] ==> show: failed/);
    expect(result.stderr).toMatch(/SERVER\s+BATCH\s+STATUS\s+STEPS OK\s+ERROR\n/);
    expect(result.stderr).toMatch(/app-1\s+1\s+success\s+1\/1\s*\n/);
    expect(result.stderr).toMatch(/app-2\s+2\s+failed\s+0\/1\s+Step "show" \(1\/1\) failed on app-2: exit code 1\n/);
    expect(result.stderr).toMatch(/app-3\s+3\s+success\s+1\/1\s*\n/);
    expect(result.stderr).toContain('3 targets: 2 success, 1 failed');
    expect(result.stderr).toMatch(/Error: 1 of 3 targets failed/);

    const missing = await runCli(['deploy', 'cli-fleet', '--wait'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('The parameters are invalid (parameters.version: Required: the deployment declares no default)');
    const malformed = await runCli(['deploy', 'cli-fleet', '--param', 'version'], env);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--param takes name=value');
  }, 90_000);
});
