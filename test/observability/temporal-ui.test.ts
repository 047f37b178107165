import { defaultPayloadConverter, type WorkflowHandle } from '@temporalio/client';
import { conversationWorkflowId, deploymentRunWorkflowId, serverHealthSweepWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { SEARCH_ATTRIBUTES } from '../../src/domain/contracts/search-attributes';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { bearer, conversationEnded } from '../support/http';
import { eventually } from '../support/eventually';
import { personToken, userWithToken, type StepDefinition, type User } from '../support/client';

type Run = { id: string; status: string; error: string | null; steps: Array<{ status: string }> };

/**
 * What a person watching the Temporal Web UI sees: each workflow's status is the run's or the
 * conversation's, its failure says which step failed where and why, and every workflow, step and
 * current state has a name a person can read.
 */
describe('the Temporal UI tells the truth about runs and conversations', () => {
  let bosun: SharedBosun;
  let token: string;
  let watcher: User;
  let serverId: string;

  beforeAll(async () => {
    bosun = await sharedBosun();
    token = await bosun.token('watchers', ['admin'], 'release-bot');
    watcher = userWithToken(bosun, token);
    serverId = await watcher.addServer({ host: '127.0.0.3' });
  });
  afterAll(async () => {
    await bosun.stop();
  });

  const define = async (name: string, steps: StepDefinition[]) => (await watcher.defineDeployment(serverId, steps, name)).id as string;
  const trigger = async (deploymentId: string) => (await watcher.trigger(deploymentId)).run_id as string;
  const finalRun = (deploymentId: string, runId: string): Promise<Run> => watcher.waitForRun(deploymentId, runId);
  const closed = (handle: WorkflowHandle) => eventually(() => handle.describe(), (d) => d.status.name !== 'RUNNING', 30_000);
  /** The summaries the UI shows beside the history's events (activities and local-activity markers). */
  const eventSummaries = async (handle: WorkflowHandle) => {
    const history = await handle.fetchHistory();
    return (history.events ?? []).flatMap((event) => (event.userMetadata?.summary ? [defaultPayloadConverter.fromPayload<string>(event.userMetadata.summary)] : []));
  };

  test('a failed run is a Failed workflow naming the step, its server and exit code; the queue goes on with the next run', async () => {
    const failing = await define('release-api', [
      { name: 'build', command: 'echo building' },
      { name: 'migrate', command: 'echo migrating; exit 3', retries: 1 },
      { name: 'restart', command: 'echo never' },
    ]);
    const healthy = await define('release-web', [{ name: 'ping', command: 'echo pong' }]);
    const failedRunId = await trigger(failing);
    const nextRunId = await trigger(healthy);

    const failed = await finalRun(failing, failedRunId);
    expect(failed.status).toBe('failed');
    expect(failed.steps.map((s) => s.status)).toEqual(['success', 'failed', 'skipped']);
    expect(failed.error).toBe('Step "migrate" (2/3) failed on srv-127.0.0.3: exit code 3 (after 2 attempts)');

    const handle = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(failedRunId));
    expect((await closed(handle)).status.name).toBe('FAILED');
    await expect(handle.result()).rejects.toMatchObject({
      cause: { type: 'DeploymentRunFailed', message: failed.error, nonRetryable: true, details: [{ step: 'migrate', index: 1, server: 'srv-127.0.0.3', exit_code: 3 }] },
    });
    const description = await handle.describe();
    expect(await description.staticSummary()).toBe('release-api on srv-127.0.0.3');
    expect(await description.staticDetails()).toContain('**Triggered by** API token: release-bot');
    // Each step's activity is named after the step.
    expect(await eventSummaries(handle)).toEqual(expect.arrayContaining(['build', 'migrate']));

    // The server's queue treated the failure as an ordinary outcome: the next run ran.
    expect((await finalRun(healthy, nextRunId)).status).toBe('success');
    const next = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(nextRunId));
    expect((await closed(next)).status.name).toBe('COMPLETED');
    expect(await next.result()).toMatchObject({ status: 'success', steps: 1 });

    // The visibility query of docs/operations.md finds the deployment's failed runs, and only those.
    const query = `ExecutionStatus="Failed" AND BosunDeployment="${failing}"`;
    const found = await eventually(async () => {
      const ids: string[] = [];
      for await (const workflow of bosun.temporal.workflow.list({ query })) ids.push(workflow.workflowId);
      return ids;
    }, (ids) => ids.length > 0);
    expect(found).toEqual([deploymentRunWorkflowId(failedRunId)]);
    // Who triggered it, as the run records it: its token.
    const byActor = `BosunActor="API token: release-bot" AND BosunDeployment="${failing}"`;
    const triggered = await eventually(async () => {
      const ids: string[] = [];
      for await (const workflow of bosun.temporal.workflow.list({ query: byActor })) ids.push(workflow.workflowId);
      return ids;
    }, (ids) => ids.length > 0);
    expect(triggered).toEqual([deploymentRunWorkflowId(failedRunId)]);
  });

  test('a running run says which step it is on; a cancelled run is a Cancelled workflow', async () => {
    const deploymentId = await define('long-job', [{ name: 'warm-up', command: 'echo ok' }, { name: 'soak', command: 'echo soaking; sleep 60' }]);
    const runId = await trigger(deploymentId);
    await watcher.waitForRun(deploymentId, runId, (r) => r.steps[1]?.status === 'running');
    const handle = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId));
    const metadata = await eventually(
      () => handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata'),
      (m) => m.currentDetails === 'step 2/2 soak running on srv-127.0.0.3',
    );
    expect(metadata.currentDetails).toBe('step 2/2 soak running on srv-127.0.0.3');

    await watcher.cancelRun(deploymentId, runId);
    const run = await finalRun(deploymentId, runId);
    expect(run.status).toBe('cancelled');
    expect(run.error).toBeNull();
    expect((await closed(handle)).status.name).toBe('CANCELLED');
  });

  test("a server's verification is named after the server; its organization's health sweep after the organization", async () => {
    const verify = await bosun.temporal.workflow.getHandle(`server-verify-${serverId}`).describe();
    expect(await verify.staticSummary()).toBe('Verify srv-127.0.0.3 (127.0.0.3)');
    const organizationId = verify.typedSearchAttributes.get(SEARCH_ATTRIBUTES.organization)!;
    const sweep = await eventually(() => bosun.temporal.workflow.getHandle(serverHealthSweepWorkflowId(organizationId)).describe(), (d) => d.status.name === 'RUNNING');
    expect(await sweep.staticSummary()).toBe("Watch the health of the organization's servers");
    expect(sweep.typedSearchAttributes.get(SEARCH_ATTRIBUTES.organization)).toBe(organizationId);
    // No workflow of the server's own watches it any more.
    await expect(bosun.temporal.workflow.getHandle(`server-health-${serverId}`).describe()).rejects.toThrow(/not found/i);
  });

  test('a successful run completes with a small result', async () => {
    const deploymentId = await define('quick', [{ name: 'one', command: 'true' }, { name: 'two', command: 'true' }]);
    const runId = await trigger(deploymentId);
    expect((await finalRun(deploymentId, runId)).status).toBe('success');
    const handle = bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId));
    expect((await closed(handle)).status.name).toBe('COMPLETED');
    const result = await handle.result();
    expect(result).toEqual({ status: 'success', steps: 2, duration_seconds: expect.any(Number) });
  });

  describe('conversations', () => {
    type Conversation = { id: string; status: string; error: string | null; steps: Array<{ id: string; status: string }> };
    const start = async (message: string) => (await watcher.startConversation(serverId, message)).id as string;
    const until = (id: string, done: (c: Conversation) => boolean): Promise<Conversation> => watcher.waitForConversation(id, done);
    const ended = conversationEnded;
    const handleOf = (id: string) => bosun.temporal.workflow.getHandle(conversationWorkflowId(id));

    test('completed: a Completed workflow with a result, a summary naming the instruction and server, steps named', async () => {
      const id = await start('show memory usage and uptime');
      expect((await until(id, ended)).status).toBe('completed');
      const handle = handleOf(id);
      expect((await closed(handle)).status.name).toBe('COMPLETED');
      expect(await handle.result()).toEqual({ status: 'completed', instructions: 1, steps_run: 2 });
      expect(await (await handle.describe()).staticSummary()).toBe('"show memory usage and uptime" on srv-127.0.0.3');
      expect(await eventSummaries(handle)).toEqual(expect.arrayContaining(['Memory usage', 'Uptime and load']));
    });

    test('failed: a Failed workflow whose failure is the conversation’s error line', async () => {
      const id = await start('tail /nonexistent/app.log and show memory usage');
      const done = await until(id, ended);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(/^Step ".+" \(1\/2\) failed on srv-127\.0\.0\.3: exit code 1$/);
      const handle = handleOf(id);
      expect((await closed(handle)).status.name).toBe('FAILED');
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'ConversationFailed', message: done.error } });

      // A follow-up starts the conversation's workflow again; its success clears the error.
      expect((await bosun.api.post(`/api/v1/conversations/${id}/messages`).set(bearer(token)).send({ message: 'show memory usage' })).status).toBe(202);
      const again = await until(id, (c) => c.status === 'completed');
      expect(again.error).toBeNull();
      const latest = bosun.temporal.workflow.getHandle(conversationWorkflowId(id));
      expect((await closed(latest)).status.name).toBe('COMPLETED');
    });

    test('an instruction that cannot be planned, or is refused, says so in its error', async () => {
      const unplanned = await until(await start('write a haiku about the cloud'), ended);
      expect(unplanned.status).toBe('failed');
      expect(unplanned.error).toMatch(/^Could not plan "write a haiku about the cloud": /);
      const refused = await until(await start('show disk usage and reboot the server'), ended);
      expect(refused.status).toBe('failed');
      expect(refused.error).toMatch(/^Step ".+" \(2\/2\) was refused by the organization's command policy: this command is destructive /);
      expect((await closed(handleOf(refused.id))).status.name).toBe('FAILED');
    });

    test('a rejected step: the conversation and its workflow are cancelled, the error names who rejected which step', async () => {
      expect((await bosun.api.put('/api/v1/policy').set(bearer(token)).send({ allow_destructive: false, require_approval_for: ['read'] })).status).toBe(200);
      try {
        const id = await start('show the hostname');
        const waiting = await until(id, (c) => c.status === 'awaiting_approval');
        const metadata = await handleOf(id).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
        expect(metadata.currentDetails).toMatch(/^step 1\/1 .+: waiting for a person's approval$/);
        // People decide on steps.
        const person = await personToken(userWithToken(bosun, token), 'Rosa', 'operator');
        expect((await bosun.api.post(`/api/v1/conversations/${id}/steps/${waiting.steps[0]!.id}/reject`).set(bearer(person.token))).status).toBe(202);
        const done = await until(id, ended);
        expect(done.status).toBe('cancelled');
        expect(done.error).toMatch(/^Step ".+" \(1\/1\) was rejected by Rosa \(person\)$/);
        expect((await closed(handleOf(id))).status.name).toBe('CANCELLED');
      } finally {
        await bosun.api.put('/api/v1/policy').set(bearer(token)).send({ allow_destructive: false, require_approval_for: ['destructive'] });
      }
    });
  });
});
