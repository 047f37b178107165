import { conversationWorkflowId, deploymentRunWorkflowId } from '../../workflows/contracts';
import { bearer, conversationEnded, eventually, runEnded, startBosun, type Bosun } from '../support/bosun';
import { connectSocket, watchRun, type BosunSocket } from '../support/socket';
import { Sshd } from '../support/sshd';

type Step = { name: string; status: string; output: string; completed_at: string | null; exit_code: number | null };
type Run = { status: string; error: string | null; completed_at: string | null; steps: Step[] };

/**
 * A server that goes away for good in the middle of a step: the host is reinstalled (a new host key)
 * while the command runs, so no retry can reach it. Nothing may be left `running`.
 */
describe('a server that vanishes while a step runs', () => {
  let bosun: Bosun;
  let sshd: Sshd;
  let token: string;
  let serverId: string;
  let socket: BosunSocket;

  beforeAll(async () => {
    bosun = await startBosun({ healthIntervalSeconds: 3600 });
    sshd = await Sshd.startPrivate();
    token = await bosun.token('vanishing');
    const { port, username, privateKey } = sshd.info;
    const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({
      title: 'doomed-host', host: '127.0.0.1', port, username, auth_method: 'private_key', private_key: privateKey,
    });
    serverId = created.body.data.id as string;
    await eventually(async () => (await bosun.api.get(`/api/v1/servers/${serverId}`).set(bearer(token))).body.data.status, (s) => s === 'verified');
    socket = await connectSocket(bosun.url, token);
  });
  afterAll(async () => {
    socket?.close();
    await sshd.stop({ dropSessions: true });
    await bosun.stop();
  });

  test('deployment: the run fails with its step failed (not running), the rest skipped, an error line, a Failed workflow', async () => {
    const deployment = await bosun.api.post('/api/v1/deployments').set(bearer(token)).send({
      name: 'vanishes', server_id: serverId,
      steps: [{ name: 'long', command: 'echo started; sleep 60; echo finished' }, { name: 'after', command: 'echo after' }],
    });
    const id = deployment.body.data.id as string;
    const trigger = await bosun.api.post(`/api/v1/deployments/${id}/run`).set(bearer(token));
    const runId = trigger.body.run_id as string;
    const read = async () => (await bosun.api.get(`/api/v1/deployments/${id}/runs/${runId}`).set(bearer(token))).body.data as Run;
    const watched = await watchRun(socket, runId);

    await eventually(read, (r) => r.steps[0]!.output.includes('started'));
    // The host is reinstalled: its sessions cut, its host key new. Reconnecting is refused for good.
    await sshd.stop({ dropSessions: true });
    sshd.rotateHostKey();
    await sshd.resume();

    const run = await eventually(read, runEnded, 60_000);
    expect(run.status).toBe('failed');
    expect(run.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
    expect(run.steps[0]!.completed_at).not.toBeNull();
    expect(run.steps[0]!.output).toMatch(/--- failed: .*host key/i);
    expect(run.error).toMatch(/^Step "long" \(1\/2\) failed on doomed-host: .*host key/i);
    expect(run.error).not.toContain('\n');

    // The final event says the same as GET.
    const last = await eventually(async () => watched.events.at(-1), (e) => e?.status === 'failed');
    expect(last!.error).toBe(run.error);
    expect(last!.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);

    // And so does the Temporal UI: a Failed workflow whose failure is the error line.
    const handle = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId));
    const description = await eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING');
    expect(description.status.name).toBe('FAILED');
    await expect(handle.result()).rejects.toMatchObject({ cause: { message: run.error, type: 'DeploymentRunFailed', nonRetryable: true } });
  });

  test('conversation: a server that cannot be reached for good fails its step with the reason, an error line, a Failed workflow', async () => {
    // Since the test above, the server answers with another host key than the one Bosun pinned.
    const start = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', chatable_id: serverId, message: 'show memory usage and uptime' });
    expect(start.status).toBe(201);
    const id = start.body.data.id as string;
    const read = async () => (await bosun.api.get(`/api/v1/conversations/${id}`).set(bearer(token))).body.data;
    const done = await eventually(read, conversationEnded, 60_000);
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
