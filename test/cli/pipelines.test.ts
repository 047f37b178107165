import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { runCli, startCli } from '../support/processes';
import { rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';

const WORK = sharedFolder('bosun-cli-pipelines-');
const GO = `${WORK}/go`;

type Json = any;

/*
 * A release from the command line (docs/cli.md, "Pipelines"): `bosun pipelines run … --wait` prints
 * each stage's change as it happens and exits as `deploy --wait` does — 0 success, 1 a stage failed,
 * 4 a stage's gate rejected by another person while it waits, 5 a stage's gate expired; `list` and
 * `get` show what the API shows; names resolve as deployments' do.
 */

let bosun: SharedBosun;
let admin: User;
let carol: User;
let bob: User;
let server: string;
const env = (user: User) => ({ ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: user.token });

const deployment = async (name: string, command: string, parameters: Json[] = []) =>
  (await carol.define({ name, server_id: server, parameters, steps: [{ name: 'do', command }] })).id as string;

const definePipeline = async (definition: Json) => {
  const res = await carol.request('post', '/pipelines', definition);
  expect(res.status).toBe(201);
  return res.body.data as Json;
};

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'cli-pipelines');
  server = await admin.addServer({ host: '127.0.0.2' });
  carol = await addPerson(bosun, admin, 'Carol', 'admin');
  bob = await addPerson(bosun, admin, 'Bob', 'approver');
  // The build holds until the test lets it go (a file), so the CLI sees it running whatever the machine's speed.
  await deployment('web-build', `echo "building $BOSUN_PARAM_VERSION"; while [ ! -e ${GO} ]; do sleep 0.1; done`, [{ name: 'version', required: true }]);
  await deployment('web-staging', 'echo staging');
  await deployment('web-prod', 'echo prod');
  await deployment('broken-tests', 'echo "2 tests failed"; exit 3');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, bob]) user.close();
  await bosun.stop();
  rmSync(WORK, { recursive: true, force: true });
});

test('run web-release --param version=1.4.2 --wait prints each stage as it changes and exits 0; list and get show it', async () => {
  const pipeline = await definePipeline({
    name: 'web-release',
    parameters: [{ name: 'version', required: true }],
    stages: [
      { name: 'build', deployment: 'web-build', parameters: { version: '${{ pipeline.parameters.version }}' } },
      { name: 'staging', deployment: 'web-staging', needs: ['build'] },
    ],
  });

  const listed = await runCli(['pipelines', 'list'], env(carol));
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(`${pipeline.id}\tweb-release\tversion\tbuild, staging<-build`);

  const cli = startCli(['pipelines', 'run', 'web-release', '--param', 'version=1.4.2', '--wait'], env(carol));
  await eventually(async () => cli.output().stdout, (out) => /==> build: running/.test(out), 60_000);
  writeFileSync(GO, '');
  const finished = await cli.finished;
  expect([finished.code, finished.stderr]).toEqual([0, expect.stringMatching(/Pipeline run [0-9a-f]{24}: success in \d+ s\n$/)]);
  const lines = finished.stdout.trim().split('\n');
  // Each stage's run begins, then ends; build's before staging's.
  const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
  expect(at(/^==> build: running \(deployment run [0-9a-f]{24}/)).toBeGreaterThanOrEqual(0);
  expect(at(/^==> build: success \(deployment run [0-9a-f]{24}\)$/)).toBeGreaterThan(at(/^==> build: running/));
  expect(at(/^==> staging: success \(deployment run [0-9a-f]{24}\)$/)).toBeGreaterThan(at(/^==> build: success/));
  expect(lines.filter((line) => line.startsWith('==> build: success'))).toHaveLength(1);

  const runId = /Pipeline run ([0-9a-f]{24}): success/.exec(finished.stderr)![1]!;
  const run = (await carol.request('get', `/pipelines/${pipeline.id}/runs/${runId}`)).body.data;
  expect(run.parameters).toEqual({ version: '1.4.2' });
  const got = await runCli(['pipelines', 'get', 'web-release', runId], env(carol));
  expect(got.code).toBe(0);
  expect(got.stdout).toBe(
    [
      `Pipeline run ${runId} of web-release: success by ${run.triggered_by}, created ${run.created_at}`,
      `==> build: success (deployment run ${run.stages[0].deployment_run_id})`,
      `==> staging: success (deployment run ${run.stages[1].deployment_run_id})`,
      '',
    ].join('\n'),
  );
  const json = await runCli(['pipelines', 'get', pipeline.id, runId, '--json'], env(carol));
  expect(JSON.parse(json.stdout)).toEqual(run);

  const missing = await runCli(['pipelines', 'run', 'no-such-pipeline'], env(carol));
  expect([missing.code, missing.stderr]).toEqual([2, 'bosun: No pipeline named "no-such-pipeline" (nor with that id) in this token\'s organization\n']);
}, 180_000);

test('a failed stage fails the run (exit 1), its dependents skipped with the reason', async () => {
  await definePipeline({
    name: 'tested-release',
    stages: [
      { name: 'tests', deployment: 'broken-tests' },
      { name: 'prod', deployment: 'web-prod', needs: ['tests'] },
    ],
  });
  const finished = await runCli(['pipelines', 'run', 'tested-release', '--wait'], env(carol));
  expect(finished.code).toBe(1);
  expect(finished.stdout).toMatch(/^==> tests: failed \(deployment run [0-9a-f]{24}\): .+$/m);
  expect(finished.stdout).toMatch(/^==> prod: skipped: .*tests.*$/m);
  expect(finished.stderr).toMatch(/Error: stage tests failed: .+\n/);
  expect(finished.stderr).toMatch(/Pipeline run [0-9a-f]{24}: failed/);
}, 180_000);

test('a gated stage rejected by another person while the CLI waits exits 4; the triggerer’s own approval is refused', async () => {
  await definePipeline({
    name: 'gated-release',
    stages: [
      { name: 'staging', deployment: 'web-staging' },
      { name: 'prod', deployment: 'web-prod', needs: ['staging'], gate: { approvals: 1 } },
    ],
  });
  const run = startCli(['pipelines', 'run', 'gated-release', '--wait'], env(carol));
  await eventually(async () => run.output().stdout, (text) => /^==> prod: awaiting_approval: waiting for 1 approval \(0 given\); expires at \S+$/m.test(text), 60_000);
  const runId = /Pipeline run ([0-9a-f]{24}): queued/.exec(run.output().stderr)![1]!;

  const self = await runCli(['pipelines', 'approve', 'gated-release', runId, 'prod'], env(carol));
  expect([self.code, self.stderr]).toEqual([1, expect.stringContaining('self_approval: ')]);
  const rejected = await runCli(['pipelines', 'reject', 'gated-release', runId, 'prod', '--reason', 'error budget spent'], env(bob));
  expect(rejected.code).toBe(0);
  expect(rejected.stdout).toMatch(/^==> prod: failed.*error budget spent/m);

  const finished = await run.finished;
  expect(finished.code).toBe(4);
  expect(finished.stdout).toMatch(/^==> prod: failed: .*error budget spent.*$/m);
  expect(finished.stderr).toMatch(/Pipeline run [0-9a-f]{24}: failed/);
}, 180_000);

test('a stage gate that expires exits 5; reject without --reason is a usage error', async () => {
  await definePipeline({ name: 'expiring-release', stages: [{ name: 'prod', deployment: 'web-prod', gate: { approvals: 1, expires_in: '2s' } }] });
  const finished = await runCli(['pipelines', 'run', 'expiring-release', '--wait'], env(carol));
  expect(finished.code).toBe(5);
  expect(finished.stdout).toMatch(/^==> prod: awaiting_approval: waiting for 1 approval/m);
  expect(finished.stdout).toMatch(/^==> prod: failed: .+$/m);

  const usage = await runCli(['pipelines', 'reject', 'expiring-release', 'a'.repeat(24), 'prod'], env(bob));
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("required option '--reason <text>' not specified");
}, 180_000);

test('cancel ends a waiting run (the waiting CLI exits 1, as for a cancelled deploy); retry keeps the succeeded stage, and an approval lets it finish', async () => {
  const pipeline = await definePipeline({
    name: 'held-release',
    stages: [
      { name: 'staging', deployment: 'web-staging' },
      { name: 'prod', deployment: 'web-prod', needs: ['staging'], gate: { approvals: 1 } },
    ],
  });
  const run = startCli(['pipelines', 'run', 'held-release', '--wait'], env(carol));
  await eventually(async () => run.output().stdout, (text) => text.includes('==> prod: awaiting_approval'), 60_000);
  const runId = /Pipeline run ([0-9a-f]{24}): queued/.exec(run.output().stderr)![1]!;

  const cancelled = await runCli(['pipelines', 'cancel', 'held-release', runId], env(carol));
  expect([cancelled.code, cancelled.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^Pipeline run ${runId} of held-release: `))]);
  const finished = await run.finished;
  expect([finished.code, finished.stderr]).toEqual([1, expect.stringContaining(`Pipeline run ${runId}: cancelled`)]);

  const retried = await runCli(['pipelines', 'retry', 'held-release', runId], env(carol));
  expect(retried.code).toBe(0);
  const retryId = retried.stdout.trim();
  expect(retryId).toMatch(/^[0-9a-f]{24}$/);
  await eventually(async () => (await carol.request('get', `/pipelines/${pipeline.id}/runs/${retryId}`)).body.data.status, (status) => status === 'awaiting_approval', 60_000);
  const approved = await runCli(['pipelines', 'approve', 'held-release', retryId, 'prod', '--comment', 'canary fine'], env(bob));
  expect([approved.code, approved.stdout]).toEqual([0, expect.stringContaining(`==> staging: success`)]);
  await eventually(async () => (await carol.request('get', `/pipelines/${pipeline.id}/runs/${retryId}`)).body.data.status, (status) => status === 'success', 60_000);
  const got = await runCli(['pipelines', 'get', 'held-release', retryId], env(carol));
  expect(got.stdout).toMatch(new RegExp(`^==> staging: success \\(deployment run [0-9a-f]{24}\\) \\(kept from pipeline run ${runId}\\)$`, 'm'));
  expect(got.stdout).toMatch(/^==> prod: success \(deployment run [0-9a-f]{24}\)$/m);
}, 180_000);
