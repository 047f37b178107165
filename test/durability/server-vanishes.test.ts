import { conversationWorkflowId, deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { eventually, startBosun, type Bosun } from '../support/bosun';
import { asUser, type User } from '../support/client';
import { Sshd } from '../support/sshd';

type Step = { name: string; status: string; output: string; completed_at: string | null; exit_code: number | null };

/**
 * A server that goes away for good in the middle of a step: the host is reinstalled (a new host key)
 * while the command runs, so no retry can reach it. Nothing may be left `running`.
 */
describe('a server that vanishes while a step runs', () => {
  let bosun: Bosun;
  let ops: User;
  // Each test's own host: one test reinstalls it.
  let sshd: Sshd;
  let serverId: string;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    ops = await asUser(bosun, 'vanishing');
  });
  beforeEach(async () => {
    sshd = await Sshd.startPrivate();
    serverId = await ops.addServer({ title: 'doomed-host', sshd: sshd.info });
  });
  afterEach(() => sshd.stop({ dropSessions: true }));
  afterAll(async () => {
    ops?.close();
    await bosun.stop();
  });

  /** The host is reinstalled: its sessions cut, its host key new. Reconnecting is refused for good. */
  const reinstall = async () => {
    await sshd.stop({ dropSessions: true });
    sshd.rotateHostKey();
    await sshd.resume();
  };

  test('deployment: the run fails with its step failed (not running), the rest skipped, an error line, a Failed workflow', async () => {
    const { id } = await ops.defineDeployment(serverId, [{ name: 'long', command: 'echo started; sleep 60; echo finished' }, { name: 'after', command: 'echo after' }]);
    const { run_id: runId } = await ops.trigger(id);
    const watched = await ops.subscribe(runId);

    await ops.waitForRun(id, runId, (r) => r.steps[0].output.includes('started'));
    await reinstall();

    const run = await ops.waitForRun(id, runId);
    expect(run.status).toBe('failed');
    expect(run.steps.map((s: Step) => s.status)).toEqual(['failed', 'skipped']);
    expect(run.steps[0]!.completed_at).not.toBeNull();
    expect(run.steps[0]!.output).toMatch(/--- failed: .*host key/i);
    expect(run.error).toMatch(/^Step "long" \(1\/2\) failed on doomed-host: .*host key/i);
    expect(run.error).not.toContain('\n');

    // The final event says the same as GET.
    const last = await watched.until((e) => e.status === 'failed');
    expect(last.error).toBe(run.error);
    expect(last.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);

    // And so does the Temporal UI: a Failed workflow whose failure is the error line.
    const handle = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId));
    const description = await eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING');
    expect(description.status.name).toBe('FAILED');
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: run.error, type: 'DeploymentRunFailed', nonRetryable: true } });
  });

  test('conversation: a server that cannot be reached for good fails its step with the reason, an error line, a Failed workflow', async () => {
    // Since it was added, the server answers with another host key than the one Bosun pinned.
    await reinstall();
    const { id } = await ops.startConversation(serverId, 'show memory usage and uptime');
    const done = await ops.waitForConversation(id);
    expect(done.status).toBe('failed');
    expect(done.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'failed']);
    expect(done.steps.every((s: { completed_at: string | null }) => s.completed_at)).toBe(true);
    expect(done.error).toMatch(/^Step "Memory usage" \(1\/2\) failed on doomed-host: .*host key/i);
    expect(done.error).not.toContain('\n');
    const handle = bosun.temporal.workflow.getHandle(conversationWorkflowId(id));
    expect((await eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING')).status.name).toBe('FAILED');
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: done.error, type: 'ConversationFailed' } });
  });
});
