import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { addPerson, asUser, type User } from '../support/client';
import { runCli, startCli } from '../support/processes';

/*
 * A gated rollout from the command line: `bosun deploy --wait` says what the run waits for while it
 * waits, and exits with its own code when a gate is rejected (4) or expires (5); `bosun runs approve`
 * is judged by the server as the API is (the triggerer cannot approve).
 */

let bosun: SharedBosun;
let admin: User;
let carol: User;
let alice: User;
let bob: User;
const env = (user: User) => ({ ...process.env, BOSUN_URL: bosun.url, BOSUN_TOKEN: user.token });

beforeAll(async () => {
  bosun = await sharedBosun();
  admin = await asUser(bosun, 'cli-gates');
  for (const host of ['127.0.0.2', '127.0.0.3']) await admin.addServer({ host, tags: ['cli'] });
  carol = await addPerson(bosun, admin, 'Carol', 'admin');
  alice = await addPerson(bosun, admin, 'Alice', 'approver');
  bob = await addPerson(bosun, admin, 'Bob', 'approver');
}, 120_000);
afterAll(async () => {
  for (const user of [admin, carol, alice, bob]) user.close();
  await bosun.stop();
});

test('deploy --wait prints “waiting for 2 approvals (1 given: Alice)”; the triggerer’s approve is refused; a rejection exits 4', async () => {
  await carol.define({ name: 'cli-gated', targets: { tags: ['cli'] }, strategy: { batch_size: 1, gates: [{ before_batch: 2, approvals: 2 }] }, steps: [{ name: 'hello', command: 'echo hello' }] });
  const deploy = startCli(['deploy', 'cli-gated', '--wait'], env(carol));
  await eventually(async () => deploy.output().stderr, (text) => text.includes('waiting for 2 approvals before batch 2 (0 given)'), 60_000);
  const runId = /Run ([0-9a-f]{24}): queued/.exec(deploy.output().stderr)![1]!;

  const self = await runCli(['runs', 'approve', 'cli-gated', runId], env(carol));
  expect([self.code, self.stderr]).toEqual([1, expect.stringContaining('self_approval: Carol triggered this run and cannot approve it')]);
  const approved = await runCli(['runs', 'approve', 'cli-gated', runId, '--comment', 'canary fine'], env(alice));
  expect([approved.code, approved.stdout]).toEqual([0, expect.stringContaining(`Run ${runId}: awaiting_approval; waiting for 2 approvals before batch 2 (1 given: Alice)`)]);
  await eventually(async () => deploy.output().stderr, (text) => text.includes('(1 given: Alice)'), 60_000);

  const rejected = await runCli(['runs', 'reject', 'cli-gated', runId, '--reason', 'latency up'], env(bob));
  expect(rejected.code).toBe(0);
  const finished = await deploy.finished;
  expect(finished.code).toBe(4);
  expect(finished.stderr).toContain('Error: approval rejected by Bob: latency up');
  expect(finished.stderr).toMatch(/Run [0-9a-f]{24}: failed/);
});

test('a gate that expires exits 5; reject without --reason is a usage error', async () => {
  await carol.define({ name: 'cli-expiring', targets: { tags: ['cli'] }, strategy: { gates: [{ before_batch: 1, approvals: 1, expires_in: '2s' }] }, steps: [{ name: 'hello', command: 'echo hello' }] });
  const finished = await runCli(['deploy', 'cli-expiring', '--wait'], env(carol));
  expect(finished.code).toBe(5);
  expect(finished.stderr).toContain('Error: approval expired after 2s');
  const usage = await runCli(['runs', 'reject', 'cli-expiring', 'a'.repeat(24)], env(bob));
  expect(usage.code).not.toBe(0);
  expect(usage.stderr).toContain("required option '--reason <text>' not specified");
});
