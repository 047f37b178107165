import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { sharedFolder } from '../support/trees';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';

/*
 * Health checks between batches on the real stack: three "servers" (the test sshd on three loopback
 * addresses) whose steps all exit 0, while a file says the service on one of them is down.
 */

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const HERE = 'here=$(echo "$SSH_CONNECTION" | cut -d" " -f3)';

let bosun: SharedBosun;
let ops: User;
let work: string;

beforeAll(async () => {
  bosun = await sharedBosun();
  ops = await asUser(bosun, 'health');
  for (const [i, host] of ADDRESSES.entries()) await ops.addServer({ host, title: `svc-${i + 1}`, tags: ['svc'] });
  work = sharedFolder('bosun-health-');
}, 120_000);
afterAll(async () => {
  ops.close();
  await bosun.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Steps that always succeed, leaving `<tag>-<address>`; a check that fails where `<tag>-down-<address>` exists. */
const release = (tag: string) => [{ name: 'release', command: `${HERE}; touch ${work}/${tag}-$here; echo released` }];
const check = (tag: string) => `${HERE}; if [ -e ${work}/${tag}-down-$here ]; then echo "service down on $here"; exit 1; fi; echo "healthy on $here"`;
const ranOn = (tag: string) => ADDRESSES.filter((address) => existsSync(`${work}/${tag}-${address}`));
const statuses = (run: { targets: Array<{ title: string; status: string }> }) => run.targets.map((t) => `${t.title}:${t.status}`);

test('a target whose steps exit 0 but whose check fails after its retries is failed, naming the check and what it said; later batches are skipped', async () => {
  writeFileSync(`${work}/down-down-127.0.0.3`, '');
  const deployment = await ops.define({
    targets: { tags: ['svc'] },
    strategy: { batch_size: 1, health_check: { command: check('down'), soak_seconds: 1, timeout_seconds: 5, retries: 2, interval_seconds: 1 } },
    steps: release('down'),
  });
  expect(deployment.strategy.health_check).toEqual({ command: check('down'), soak_seconds: 1, timeout_seconds: 5, retries: 2, interval_seconds: 1 });
  const run = await ops.runToEnd(deployment.id);
  expect(statuses(run)).toEqual(['svc-1:success', 'svc-2:failed', 'svc-3:skipped']);
  expect(run.status).toBe('failed');
  const [healthy, down, skipped] = run.targets;
  expect(healthy.health).toMatchObject({ status: 'success', attempts: [{ attempt: 1, exit_code: 0, output: 'healthy on 127.0.0.2\n' }] });
  expect(down.health).toMatchObject({ status: 'failed', attempts: [{ attempt: 1, exit_code: 1 }, { attempt: 2, exit_code: 1 }, { attempt: 3, exit_code: 1, output: 'service down on 127.0.0.3\n' }] });
  expect(down.error).toBe(`Health check "${check('down').slice(0, 120)}" failed on svc-2 after 3 attempts: exit code 1: service down on 127.0.0.3`);
  expect(down.steps).toEqual([expect.objectContaining({ name: 'release', status: 'success' })]);
  expect(skipped.health).toBeNull();
  expect(run.error).toContain('1 of 3 targets failed (more than the 0 allowed: later batches skipped); first: Health check');
  expect(ranOn('down')).toEqual(ADDRESSES.slice(0, 2));
  // Attempts are 1 s apart (interval_seconds), each after the 1 s soak.
  const times = down.health.attempts.map((a: { at: string }) => Date.parse(a.at));
  expect(times[1] - times[0]).toBeGreaterThanOrEqual(1000);
  expect(times[2] - times[1]).toBeGreaterThanOrEqual(1000);
});

test('a check that outlasts its timeout is stopped and fails; an empty check command is refused', async () => {
  const deployment = await ops.define({ targets: { server_ids: [(await ops.listServers('tag=svc')).data[0].id] }, strategy: { health_check: { command: 'echo waiting; sleep 30', timeout_seconds: 1 } }, steps: release('slow') });
  const run = await ops.runToEnd(deployment.id);
  expect(run.status).toBe('failed');
  expect(run.targets[0].health).toMatchObject({ status: 'failed', attempts: [{ attempt: 1, exit_code: null, timed_out: true, output: 'waiting\n' }] });
  expect(run.targets[0].error).toBe(`Health check "echo waiting; sleep 30" failed on ${run.targets[0].title} after 1 attempt: timed out after 1 s: waiting`);
  // The kill of the check's process group is a command Bosun ran: in the trail, on that server, for that attempt.
  const [kill] = await eventually(
    async () =>
      ((await ops.request('get', `/audit?action=command.run&server=${run.targets[0].server_id}&per_page=100`)).body.data as Array<Record<string, any>>).filter(
        (e) => e.details.purpose === 'stop_process_group' && e.details.step_name === 'health check' && e.outcome !== 'pending',
      ),
    (list) => list.length === 1,
  );
  expect(kill).toMatchObject({ outcome: 'ok', actor: { type: 'system' }, details: { health_check_attempt: 1, command: expect.stringMatching(/^kill -TERM -\d+ /), exit_code: 0 } });

  for (const command of ['', '   ']) {
    const refused = await ops.request('post', '/deployments', { name: 'no-check', targets: { tags: ['svc'] }, strategy: { health_check: { command } }, steps: release('never') });
    expect([refused.status, refused.body.error.details[0].path]).toEqual([422, 'strategy.health_check.command']);
  }
});

test('a healthy fleet: every target’s check passes and the run succeeds', async () => {
  const deployment = await ops.define({ targets: { tags: ['svc'] }, strategy: { batch_size: 2, health_check: { command: 'true', soak_seconds: 0 } }, steps: release('fine') });
  const run = await ops.runToEnd(deployment.id);
  expect(run.status).toBe('success');
  expect(run.targets.map((t: { health: { status: string } }) => t.health.status)).toEqual(['success', 'success', 'success']);
  // Each check is a command Bosun ran: in the audit trail, on its server, with its exit.
  const checks = await eventually(
    async () => ((await ops.request('get', '/audit?action=command.run&per_page=100')).body.data as Array<Record<string, any>>).filter((e) => e.details.step_name === 'health check' && e.details.command === 'true' && e.outcome === 'ok'),
    (list) => list.length >= 3,
  );
  expect(new Set(checks.map((e) => e.server_id)).size).toBe(3);
  expect(checks[0]!.details).toMatchObject({ health_check_attempt: expect.any(Number), exit_code: 0, command_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
});

test('without a soak, each target is checked as soon as its own steps end, not after the rest of its batch', async () => {
  // svc-3's step waits (up to 20 s) for svc-1's check to have run: it can only succeed if that check
  // does not wait for the batch. svc-1's check then fails, and fails the run.
  const checked = `${work}/overlap-checked-127.0.0.2`;
  const deployment = await ops.define({
    targets: { tags: ['svc'] },
    strategy: { batch_size: 3, health_check: { command: `${HERE}; touch ${work}/overlap-checked-$here; [ "$here" != 127.0.0.2 ] || { echo "down on $here"; exit 1; }`, soak_seconds: 0 } },
    steps: [{ name: 'release', command: `${HERE}; if [ "$here" = 127.0.0.4 ]; then i=0; while [ ! -e ${checked} ]; do i=$((i+1)); [ $i -lt 200 ] || exit 1; sleep 0.1; done; fi; echo released` }],
  });
  const run = await ops.runToEnd(deployment.id);
  expect(statuses(run)).toEqual(['svc-1:failed', 'svc-2:success', 'svc-3:success']);
  expect(run.targets.map((t: { health: { status: string } }) => t.health.status)).toEqual(['failed', 'success', 'success']);
  expect(run.targets[0].error).toMatch(/^Health check ".*" failed on svc-1 after 1 attempt: exit code 1: down on 127.0.0.2$/);
  expect(run.error).toContain('1 of 3 targets failed');
  // svc-1's check began (its audit entry is written before the command runs) before svc-3's step
  // ended. Not the attempt's own time: that is when its result was written, which on a loaded machine
  // may come after svc-3 has ended, check and all. (The trail lists an entry once it is chained.)
  const [began] = await eventually(
    async () =>
      ((await ops.request('get', `/audit?action=command.run&server=${run.targets[0].server_id}&per_page=100`)).body.data as Array<Record<string, any>>).filter(
        (e) => e.details.step_name === 'health check' && e.details.health_check_attempt === 1 && e.details.command.includes('overlap-checked'),
      ),
    (list) => list.length === 1,
  );
  expect(Date.parse(began!.at)).toBeLessThan(Date.parse(run.targets[2].steps[0].completed_at));
});
