import { randomBytes } from 'node:crypto';
import { ApplicationFailure, CancelledFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { conversationWorkflowId, deploymentRunWorkflowId } from '../../src/domain/contracts/workflow-ids';
import { type ConversationInput, type PlannedStepRef } from '../../src/domain/contracts/conversations';
import { type QueuedRun, type StepResult } from '../../src/domain/contracts/runs';
import { createDeploymentActivities } from '../../activities/deployment-steps';
import mongoose, { Types } from 'mongoose';
import { connectDatabase } from '../../src/domain/database-connection';
import { DeploymentRunModel } from '../../src/domain/deployments/model';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { SecretBox } from '../../src/domain/secrets/secret-box';
import { SshPool } from '../../src/domain/ssh/pool';
import { openConnection } from '../../src/domain/ssh/connect';
import { ServerModel } from '../../src/domain/servers/model';
import { sealCredentials } from '../../src/domain/servers/credentials';
import { eventually } from '../support/bosun';
import { sharedServices } from '../support/shared';
import { createLogger } from '../../src/logger';
import { createWorkflowOutcomeActivities } from '../../activities/workflow-outcome';
import { names, outcome, untilCancelled, workflowEnv, type Call, type WorkflowEnv } from '../support/workflow-env';
import { processesMatching } from '../support/processes';

/**
 * The failure branches of every workflow, with mocked activities, on the Temporal dev server the
 * tests already run (TestWorkflowEnvironment.createFromExistingServer): what each branch calls, and
 * how the workflow ends as the Temporal UI shows it. The end-to-end tests cover the real activities.
 */

let w: WorkflowEnv;
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  w = await workflowEnv();
  env = w.env;
});
afterAll(() => w?.teardown());
const withWorker: WorkflowEnv['withWorker'] = (mocks, body) => w.withWorker(mocks, body);
const log = createLogger('silent');

describe('deploymentRunWorkflow', () => {
  const run = (): QueuedRun => ({
    runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', serverId: 'srv', deploymentName: 'release', triggeredBy: 'API token: ci', serverTitle: 'web-1',
  });
  const twoSteps = [
    { name: 'migrate', command: 'x', timeout_seconds: null, retries: 0, continue_on_error: false },
    { name: 'restart', command: 'y', timeout_seconds: null, retries: 0, continue_on_error: false },
  ];
  const bookkeeping = {
    beginOneServerRun: async () => ({ steps: twoSteps, frozen: null }),
    endedRun: async () => null,
    failRunStep: async () => undefined,
    skipSteps: async () => undefined,
    cancelSteps: async () => undefined,
    finishRun: async () => undefined,
  };

  test('a step that fails for good: the step is failed (not left running), the rest skipped, a Failed workflow naming step and server', async () => {
    const input = run();
    await withWorker(
      { ...bookkeeping, startStep: async () => { throw ApplicationFailure.nonRetryable('Host key mismatch for 127.0.0.1:22', 'SshHostKeyMismatch'); } },
      async (taskQueue, calls) => {
        const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });
        const failure = await handle.result().catch((e: WorkflowFailedError) => e);
        expect(failure).toBeInstanceOf(WorkflowFailedError);
        expect((failure as WorkflowFailedError).cause).toMatchObject({
          type: 'DeploymentRunFailed', nonRetryable: true,
          message: 'Step "migrate" (1/2) failed on web-1: Host key mismatch for 127.0.0.1:22',
          details: [{ step: 'migrate', index: 0, server: 'web-1', exit_code: null }],
        });
        expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'failRunStep', 'skipSteps', 'finishRun']);
        expect(calls.find(([n]) => n === 'failRunStep')![1]).toEqual({ runId: input.runId, index: 0, message: 'Host key mismatch for 127.0.0.1:22' });
        expect(calls.at(-1)![1]).toEqual({ runId: input.runId, status: 'failed', error: 'Step "migrate" (1/2) failed on web-1: Host key mismatch for 127.0.0.1:22' });
        expect(await outcome(handle)).toBe('FAILED');
      },
    );
  });

  test("the last step's success ends the run in its own write: no finishRun; after a failure it does not, and finishRun fails the run", async () => {
    const succeeding = run();
    await withWorker(
      { ...bookkeeping, startStep: async ({ endsRun }: { endsRun?: boolean }): Promise<StepResult> => ({ status: 'success', exitCode: 0, timedOut: false, ...(endsRun ? { endedRun: true } : {}) }) },
      async (taskQueue, calls) => {
        const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(succeeding.runId), args: [succeeding] });
        await expect(handle.result()).resolves.toMatchObject({ status: 'success', steps: 2 });
        expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'startStep']);
        expect(calls.map(([, input]) => (input as { endsRun?: boolean }).endsRun)).toEqual([undefined, undefined, true]);
      },
    );

    const failing = run();
    const steps = [{ ...twoSteps[0]!, continue_on_error: true }, twoSteps[1]!];
    await withWorker(
      {
        ...bookkeeping,
        beginOneServerRun: async () => ({ steps: steps, frozen: null }),
        startStep: async ({ index }: { index: number }): Promise<StepResult> => (index === 0 ? { status: 'failed', exitCode: 1, timedOut: false } : { status: 'success', exitCode: 0, timedOut: false }),
      },
      async (taskQueue, calls) => {
        const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(failing.runId), args: [failing] });
        await expect(handle.result()).rejects.toMatchObject({ cause: { message: 'Step "migrate" (1/2) failed on web-1: exit code 1' } });
        expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'startStep', 'finishRun']);
        expect((calls[2]![1] as { endsRun?: boolean }).endsRun).toBeUndefined();
        expect(calls.at(-1)![1]).toMatchObject({ status: 'failed' });
      },
    );
  });

  test('a step that exits non-zero after its retries: Failed, with the exit code', async () => {
    const input = run();
    const steps = [{ ...twoSteps[0]!, retries: 2 }, twoSteps[1]!];
    await withWorker(
      { ...bookkeeping, beginOneServerRun: async () => ({ steps: steps, frozen: null }), startStep: async (): Promise<StepResult> => ({ status: 'failed', exitCode: 2, timedOut: false }) },
      async (taskQueue, calls) => {
        const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });
        await expect(handle.result()).rejects.toMatchObject({ cause: { message: 'Step "migrate" (1/2) failed on web-1: exit code 2 (after 3 attempts)' } });
        expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'startStep', 'startStep', 'skipSteps', 'finishRun']);
      },
    );
  });

  test('cancelled while queued (closed before its workflow began): a Cancelled workflow, nothing run', async () => {
    const input = run();
    await withWorker({ ...bookkeeping, beginOneServerRun: async () => ({ steps: null, frozen: null }), endedRun: async () => ({ status: 'cancelled', error: null }) }, async (taskQueue, calls) => {
      const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });
      await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
      expect(names(calls)).toEqual(['beginOneServerRun', 'endedRun', 'cancelOwnWorkflow']);
      expect(await outcome(handle)).toBe('CANCELLED');
    });
  });

  test('closed as failed before it began (by a sweep): a Failed workflow with the run’s error', async () => {
    const input = run();
    await withWorker({ ...bookkeeping, beginOneServerRun: async () => ({ steps: null, frozen: null }), endedRun: async () => ({ status: 'failed', error: 'Its worker died' }) }, async (taskQueue) => {
      const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'DeploymentRunFailed', message: 'Its worker died' } });
    });
  });

  test('a handed-off step whose follower lost it (StepNotHeld, not retryable) runs again elsewhere; one no worker can fix (SshHostKeyMismatch) fails the step', async () => {
    const followed = async (why: ApplicationFailure, body: (handle: WorkflowHandle, calls: Call[]) => Promise<void>) => {
      const input = run();
      let ownQueue = '';
      const mocks = {
        ...bookkeeping,
        beginOneServerRun: async () => ({ steps: [twoSteps[0]!], frozen: null }),
        // Handed off to this worker's own task queue, where awaitStep then fails.
        startStep: async () => ({ handedOff: ownQueue }),
        awaitStep: async () => { throw why; },
        runStep: async (): Promise<StepResult> => ({ status: 'success', exitCode: 0, timedOut: false }),
      };
      await withWorker(mocks, async (taskQueue, calls) => {
        ownQueue = taskQueue;
        await body(await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] }), calls);
      });
    };
    await followed(ApplicationFailure.nonRetryable('This worker no longer holds the command', 'StepNotHeld'), async (handle, calls) => {
      await expect(handle.result()).resolves.toMatchObject({ status: 'success', steps: 1 });
      expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'awaitStep', 'runStep', 'finishRun']);
    });
    await followed(ApplicationFailure.nonRetryable('Host key mismatch for 127.0.0.1:22', 'SshHostKeyMismatch'), async (handle, calls) => {
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'DeploymentRunFailed', message: 'Step "migrate" (1/1) failed on web-1: Host key mismatch for 127.0.0.1:22' } });
      expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'awaitStep', 'failRunStep', 'skipSteps', 'finishRun']);
    });
  });

  test('cancelled while running: the running step is cancelled, the run closed cancelled, a Cancelled workflow', async () => {
    const input = run();
    let queue = '';
    await withWorker(
      { ...bookkeeping, startStep: async () => ({ handedOff: queue }), awaitStep: untilCancelled },
      async (taskQueue, calls) => {
        queue = taskQueue;
        const handle = await env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });
        await eventually(async () => names(calls), (n) => n.includes('awaitStep'));
        await handle.cancel();
        await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
        expect(names(calls)).toEqual(['beginOneServerRun', 'startStep', 'awaitStep', 'cancelSteps', 'finishRun']);
        expect(calls.at(-1)![1]).toEqual({ runId: input.runId, status: 'cancelled', error: null });
        expect(await outcome(handle)).toBe('CANCELLED');
      },
    );
  });
});

describe('conversationWorkflow', () => {
  const input = (): ConversationInput => ({ conversationId: randomBytes(12).toString('hex'), organizationId: 'org', inbox: ['m1'] });
  const step = (index: number, extra: Partial<PlannedStepRef> = {}): PlannedStepRef => ({
    stepId: `s${index}`, index, title: `Step ${index}`, serverId: 'srv', refused: false, needsApproval: false, sourceServerId: null, ...extra,
  });
  const bookkeeping = {
    setConversationStatus: async () => undefined,
    recordDecision: async () => undefined,
    failConversationStep: async () => undefined,
    closeOpenSteps: async () => undefined,
    planningFailed: async () => undefined,
    finishConversation: async (args: { status: string }) => (args.status === 'completed' ? null : `the ${args.status} line`),
  };
  const start = (taskQueue: string, args: ConversationInput) =>
    env.client.workflow.start('conversationWorkflow', { taskQueue, workflowId: conversationWorkflowId(args.conversationId), args: [args] });

  test('a step fails and the re-plan fails too: the instruction fails, a Failed workflow with the conversation’s error line', async () => {
    await withWorker(
      {
        ...bookkeeping,
        planMessage: async () => ({ ok: true, steps: [step(0), step(1)] }),
        runConversationStep: async (): Promise<StepResult> => ({ status: 'failed', exitCode: 1, timedOut: false }),
        replanAfterFailure: async () => { throw ApplicationFailure.nonRetryable('The planner is unreachable', 'PlannerUnreachable'); },
      },
      async (taskQueue, calls) => {
        const args = input();
        const handle = await start(taskQueue, args);
        await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'ConversationFailed', message: 'the failed line', nonRetryable: true } });
        expect(names(calls)).toEqual(['planMessage', 'runConversationStep', 'replanAfterFailure', 'closeOpenSteps', 'finishConversation']);
        expect(calls.at(-1)![1]).toEqual({ conversationId: args.conversationId, status: 'failed', failedStep: 0 });
        expect(await outcome(handle)).toBe('FAILED');
      },
    );
  });

  test('a re-plan that works: the new steps run and the conversation completes', async () => {
    await withWorker(
      {
        ...bookkeeping,
        planMessage: async () => ({ ok: true, steps: [step(0)] }),
        runConversationStep: async (i: { index: number }): Promise<StepResult> => ({ status: i.index === 0 ? 'failed' : 'success', exitCode: i.index === 0 ? 1 : 0, timedOut: false }),
        replanAfterFailure: async () => ({ ok: true, steps: [step(1)] }),
      },
      async (taskQueue, calls) => {
        const handle = await start(taskQueue, input());
        expect(await handle.result()).toEqual({ status: 'completed', instructions: 1, steps_run: 2 });
        expect(names(calls)).toEqual(['planMessage', 'runConversationStep', 'replanAfterFailure', 'runConversationStep', 'finishConversation']);
      },
    );
  });

  test('the planner unreachable through every retry: the planning failure is recorded and the workflow fails', async () => {
    await withWorker(
      { ...bookkeeping, planMessage: async () => { throw ApplicationFailure.nonRetryable('connection refused', 'PlannerUnreachable'); } },
      async (taskQueue, calls) => {
        const args = input();
        const handle = await start(taskQueue, args);
        await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'ConversationFailed' } });
        expect(names(calls)).toEqual(['planMessage', 'planningFailed', 'finishConversation']);
        expect(calls[1]![1]).toEqual({ conversationId: args.conversationId, messageId: 'm1', message: 'connection refused' });
      },
    );
  });

  test('a step its server refuses for good: the step is failed with the reason, and the rest closed', async () => {
    await withWorker(
      {
        ...bookkeeping,
        planMessage: async () => ({ ok: true, steps: [step(0), step(1)] }),
        runConversationStep: async () => { throw ApplicationFailure.nonRetryable('Authentication failed', 'SshAuthenticationFailed'); },
        replanAfterFailure: async () => ({ ok: false }),
      },
      async (taskQueue, calls) => {
        const args = input();
        const handle = await start(taskQueue, args);
        await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'ConversationFailed' } });
        expect(names(calls)).toEqual(['planMessage', 'runConversationStep', 'failConversationStep', 'replanAfterFailure', 'closeOpenSteps', 'finishConversation']);
        expect(calls[2]![1]).toEqual({ conversationId: args.conversationId, index: 0, message: 'Authentication failed' });
      },
    );
  });

  test('a refused step: nothing runs, the instruction fails naming the refused step', async () => {
    await withWorker(
      { ...bookkeeping, planMessage: async () => ({ ok: true, steps: [step(0), step(1, { refused: true })] }), runConversationStep: async () => ({ status: 'success', exitCode: 0, timedOut: false }) },
      async (taskQueue, calls) => {
        const args = input();
        await expect((await start(taskQueue, args)).result()).rejects.toMatchObject({ cause: { type: 'ConversationFailed' } });
        expect(names(calls)).toEqual(['planMessage', 'closeOpenSteps', 'finishConversation']);
        expect(calls.at(-1)![1]).toEqual({ conversationId: args.conversationId, status: 'failed', failedStep: 1 });
      },
    );
  });

  test('cancelled while a step runs: the step is stopped, the conversation closed cancelled, a Cancelled workflow', async () => {
    await withWorker(
      { ...bookkeeping, planMessage: async () => ({ ok: true, steps: [step(0)] }), runConversationStep: untilCancelled },
      async (taskQueue, calls) => {
        const args = input();
        const handle = await start(taskQueue, args);
        await eventually(async () => names(calls), (n) => n.includes('runConversationStep'));
        await handle.cancel();
        await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
        expect(names(calls)).toEqual(['planMessage', 'runConversationStep', 'closeOpenSteps', 'finishConversation']);
        expect(calls.at(-1)![1]).toEqual({ conversationId: args.conversationId, status: 'cancelled', error: 'Cancelled' });
        expect(await outcome(handle)).toBe('CANCELLED');
      },
    );
  });
});

describe('activities in a mock activity context', () => {
  test('cancelOwnWorkflow requests the cancellation of the workflow that called it', async () => {
    const workflowId = `victim-${randomBytes(4).toString('hex')}`;
    // A workflow no worker runs: it stays open, and a cancel request shows in its history.
    const victim = await env.client.workflow.start('conversationWorkflow', { taskQueue: `nobody-${workflowId}`, workflowId, args: [{ conversationId: 'c', organizationId: 'o', inbox: [] }] });
    const activity = new MockActivityEnvironment(
      { workflowExecution: { workflowId, runId: victim.firstExecutionRunId } },
      { client: env.client },
    );
    await activity.run(createWorkflowOutcomeActivities().cancelOwnWorkflow);
    const history = await victim.fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes)).toBe(true);
    await victim.terminate('test over');
  });

  test('cancelSteps while a handed-off command that nobody follows still runs: the command stopped as a cancel (its note written), the step ends cancelled', async () => {
    await connectDatabase(embeddedMongoUri(sharedServices().mongoPort, `bosun_test_cancelheld_${randomBytes(4).toString('hex')}`));
    const sshPool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 4, log });
    const marker = `sleep 39.${randomBytes(2).readUInt16BE(0)}`;
    try {
      const box = new SecretBox(randomBytes(32));
      const activities = createDeploymentActivities({ secretBox: box, sshPool, log, stepOutputLimitBytes: 4096, outputFlushMs: 50, handoffTaskQueue: 'held-here', wakeQueue: async () => undefined });
      const { sshd } = sharedServices();
      const serverId = new Types.ObjectId();
      const { ssh, hostKeyFingerprint } = await openConnection({ key: 'probe', host: sshd.host, port: sshd.port, username: sshd.username, privateKey: sshd.privateKey, hostKeyFingerprint: null }, 5000);
      ssh.dispose();
      await ServerModel.create({
        _id: serverId, organization_id: new Types.ObjectId(), title: 'held', host: sshd.host, port: sshd.port, username: sshd.username, auth_method: 'private_key',
        status: 'verified', host_key_fingerprint: hostKeyFingerprint, credentials: sealCredentials(box, serverId.toString(), { private_key: sshd.privateKey }),
      });
      const run = await DeploymentRunModel.create({
        organization_id: new Types.ObjectId(), deployment_id: new Types.ObjectId(), server_id: serverId, status: 'running',
        triggered_by: 'ci', token_id: new Types.ObjectId(), queue_seq: 1,
        steps: [{ name: 'long', command: `echo started; ${marker}`, status: 'pending' }, { name: 'after', command: 'true', status: 'pending' }],
      });
      const runId = run._id.toString();
      const attempt = { runId, serverId: serverId.toString(), organizationId: run.organization_id.toString(), index: 0, exitAttempt: 0, finalExitAttempt: true };
      // The command outlives its first activity: it is held on this worker for an awaitStep that never comes
      // (the workflow was cancelled between the two).
      expect(await new MockActivityEnvironment().run(activities.startStep, { ...attempt, handoffAfterMs: 300 })).toEqual({ handedOff: 'held-here' });
      await eventually(async () => (await DeploymentRunModel.findById(runId).lean())!.steps[0]!.pgid, (pgid) => typeof pgid === 'number');
      await new MockActivityEnvironment().run(activities.cancelSteps, { runId });
      await eventually(async () => processesMatching(marker), (pids) => pids === '');
      // This worker held it: stopped as any cancel is, its note written before the step closed; no follower claims it after.
      await expect(new MockActivityEnvironment().run(activities.awaitStep, attempt)).rejects.toThrow('This worker no longer holds the command');
      const after = (await DeploymentRunModel.findById(runId).lean())!;
      expect(after.steps.map((step) => step.status)).toEqual(['cancelled', 'cancelled']);
      expect(after.steps[0]).toMatchObject({ pgid: null, exit_code: null });
      expect(after.steps[0]!.output).toMatch(/^started\n[\s\S]*--- cancelled: the command's process group was killed ---\n$/);
    } finally {
      await sshPool.close();
      await mongoose.connection.dropDatabase();
      await mongoose.disconnect();
    }
  });

  test('failRunStep closes a step left running: failed, completed, its failure noted; a finished step keeps its result', async () => {
    await connectDatabase(embeddedMongoUri(sharedServices().mongoPort, `bosun_test_failstep_${randomBytes(4).toString('hex')}`));
    const sshPool = new SshPool({ connectTimeoutMs: 1000, maxChannelsPerConnection: 1, log });
    try {
      const activities = createDeploymentActivities({ secretBox: new SecretBox(randomBytes(32)), sshPool, log, stepOutputLimitBytes: 4096, handoffTaskQueue: 'q', wakeQueue: async () => undefined });
      const run = await DeploymentRunModel.create({
        organization_id: new Types.ObjectId(), deployment_id: new Types.ObjectId(), server_id: new Types.ObjectId(), status: 'running',
        triggered_by: 'ci', token_id: new Types.ObjectId(), queue_seq: 1,
        steps: [
          { name: 'migrate', command: 'x', status: 'running', output: 'partial output', started_at: new Date() },
          { name: 'restart', command: 'y', status: 'success', output: 'done\n', exit_code: 0 },
        ],
      });
      const activity = new MockActivityEnvironment();
      await activity.run(activities.failRunStep, { runId: run._id.toString(), index: 0, message: 'Host key mismatch' });
      await activity.run(activities.failRunStep, { runId: run._id.toString(), index: 1, message: 'must not apply' });
      const after = (await DeploymentRunModel.findById(run._id).lean())!;
      expect(after.steps[0]).toMatchObject({ status: 'failed', pgid: null, output: 'partial output\n--- failed: Host key mismatch ---\n' });
      expect(after.steps[0]!.completed_at).toBeInstanceOf(Date);
      expect(after.steps[1]).toMatchObject({ status: 'success', output: 'done\n', exit_code: 0 });
      expect(after.seq).toBe(run.seq + 1);
    } finally {
      await sshPool.close();
      await mongoose.connection.dropDatabase();
      await mongoose.disconnect();
    }
  });
});
