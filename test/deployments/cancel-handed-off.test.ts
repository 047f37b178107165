import { randomBytes } from 'node:crypto';
import { bearer, eventually, startBosun, type Bosun } from '../support/bosun';
import { userWithToken, type User } from '../support/client';
import { deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';

/*
 * A step still running after its hand-off is followed by `awaitStep` on the worker that holds its
 * command. A cancel that comes after the hand-off and before any follower claims it (a busy machine
 * stretches that moment; here nothing polls the worker's own queue, so it lasts) stops the command as
 * any cancel does: killed, said so in its output, the rest of the run cancelled.
 */
describe('cancelling a step handed off and not yet followed', () => {
  let bosun: Bosun;
  let token: string;
  let ci: User;
  let serverId: string;

  beforeAll(async () => {
    bosun = await startBosun({ stepHandoffAfterMs: 300, followHandoffs: false });
    token = await bosun.token('cancel-handoff', ['admin'], 'ci');
    ci = userWithToken(bosun, token);
    serverId = await ci.addServer();
  });
  afterAll(() => bosun.stop());

  /** Asks the server itself whether a process matching the pattern still runs. */
  const stillRunning = async (pattern: string) => {
    const check = (await ci.defineDeployment(serverId, [{ name: 'ps', command: `pgrep -f '[${pattern[0]}]${pattern.slice(1)}' >/dev/null && echo alive || echo gone` }])).id as string;
    return (await ci.runToEnd(check)).steps[0].output.trim() === 'alive';
  };

  test('the command is killed, its output says so, and what is left is cancelled', async () => {
    const tag = `62.${Math.floor(Math.random() * 1e6)}`;
    const id = (await ci.defineDeployment(serverId, [{ name: 'long', command: `echo begun; sleep ${tag}` }, { name: 'after', command: 'echo after' }])).id as string;
    const runId = (await ci.trigger(id, randomBytes(4).toString('hex'))).run_id as string;
    // Handed off: its follower is scheduled on the worker's own queue, and nothing takes it.
    const pending = async () => {
      // Its workflow starts once the run's turn in its server's queue comes.
      const described = await bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)).describe().catch(() => null);
      return (described?.raw.pendingActivities ?? []).map((a) => a.activityType?.name);
    };
    await eventually(pending, (names) => names.includes('awaitStep'));
    const cancel = await bosun.api.post(`/api/v1/deployments/${id}/runs/${runId}/cancel`).set(bearer(token));
    expect(cancel.status).toBe(202);
    const run = await ci.waitForRun(id, runId, (r) => r.status === 'cancelled', 20_000);
    expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(run.steps[0].output).toMatch(/^begun\n[\s\S]*--- cancelled: the command's process group was killed ---\n$/);
    expect(await stillRunning(`sleep ${tag}`)).toBe(false);
  });
});
