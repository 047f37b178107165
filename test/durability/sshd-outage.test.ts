import { startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { Sshd } from '../support/sshd';

describe('a server that drops off in the middle of a step', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let ops: User;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    sshd = await Sshd.startPrivate();
    ops = await asUser(bosun, 'outage');
  });
  afterAll(async () => {
    ops?.close();
    await sshd.stop();
    await bosun.stop();
  });

  test('sshd stopped during a step and back within the retry window: the run completes', async () => {
    const serverId = await ops.addServer({ title: 'flaky-host', sshd: sshd.info });
    const { id } = await ops.defineDeployment(serverId, [{ name: 'long', command: 'echo started; sleep 3; echo finished' }, { name: 'after', command: 'echo after' }]);
    const { run_id: runId } = await ops.trigger(id);

    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('started'));
    await sshd.stop({ dropSessions: true });
    await ops.waitForRun(id, runId, (r) => /connection was lost|refused/.test(r.steps[0].output), 20_000);
    // The outage lasts until a retry has found the server down.
    await ops.waitForRun(id, runId, (r) => /refused[^\n]*; retrying/.test(r.steps[0].output), 20_000);
    await sshd.resume();

    const run = await ops.waitForRun(id, runId);
    expect(run.status).toBe('success');
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['success', 'success']);
    expect(run.steps[0].output).toMatch(/^started\n[\s\S]*retrying[\s\S]*attempt \d+: the previous attempt was interrupted[\s\S]*started\nfinished\n$/);
    expect(run.steps[0].attempts).toBeGreaterThanOrEqual(2);
  });
});
