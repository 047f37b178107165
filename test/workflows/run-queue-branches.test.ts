import { randomBytes } from 'node:crypto';
import { CancelledFailure, type WorkflowHandle } from '@temporalio/client';
import type { FleetRunInput, FleetTarget, NextRun, QueuedRun, RunStepDefinition, StepResult, TurnOutcome } from '../../src/domain/contracts/runs';
import { deploymentRunWorkflowId, fleetTargetGroupWorkflowId, serverRunQueueWorkflowId, TURN_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/bosun';
import { currentDetails, names, outcome, untilCancelled, workflowEnv, type Call, type WorkflowEnv } from '../support/workflow-env';

/*
 * The branches of a run's way to its server's turn, of the queue that hands turns out, and of a
 * fleet run and its targets, on mocked activities: what each calls and how each ends as the
 * Temporal UI shows it. The end-to-end tests (test/deployments, test/durability) cover the real activities.
 */

let w: WorkflowEnv;
beforeAll(async () => {
  w = await workflowEnv();
});
afterAll(() => w?.teardown());

const id = () => randomBytes(12).toString('hex');
const step = (name: string): RunStepDefinition => ({ name, command: 'x', timeout_seconds: null, retries: 0, continue_on_error: false });
const succeeded = async ({ endsRun }: { endsRun?: boolean }): Promise<StepResult> => ({ status: 'success', exitCode: 0, timedOut: false, ...(endsRun ? { endedRun: true } : {}) });
const bookkeeping = {
  beginOneServerRun: async () => ({ steps: [step('only')], frozen: null }),
  endedRun: async () => null,
  skipSteps: async () => undefined,
  cancelSteps: async () => undefined,
  cancelQueuedRun: async () => undefined,
  finishRun: async () => undefined,
  stillWaiting: async () => true,
  failQueuedRun: async () => undefined,
  startStep: succeeded,
};
/** A one-server run as a worker's sweep starts it: with its place in its server's queue. */
const placed = (serverId = `srv-${id()}`): QueuedRun => ({
  runId: id(), organizationId: 'org', deploymentId: 'dep', serverId, deploymentName: 'release', triggeredBy: 'API token: ci', serverTitle: 'web-1', place: 1,
});
const startRun = (taskQueue: string, run: QueuedRun) =>
  w.env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(run.runId), args: [run] });
const waitingForTurn = (handle: WorkflowHandle) => eventually(() => currentDetails(handle), (d) => d.startsWith('waiting for its turn'));

describe('a one-server run started with its place (by a worker’s sweep, its queue’s wake lost) takes its server’s turn', () => {
  test('nothing ahead of it: it begins with the turn (no beginOneServerRun) and runs its steps', async () => {
    const run = placed();
    await w.withWorker({ ...bookkeeping, takeTurn: async (): Promise<TurnOutcome> => ({ turn: true, steps: [step('a'), step('b')] }) }, async (taskQueue, calls) => {
      await expect((await startRun(taskQueue, run)).result()).resolves.toMatchObject({ status: 'success', steps: 2 });
      expect(names(calls)).toEqual(['takeTurn', 'startStep', 'startStep']);
      expect(calls[0]![1]).toEqual({ runId: run.runId, serverId: run.serverId, organizationId: 'org', place: 1 });
    });
  });

  test('runs ahead of it: it waits, begins only when its queue says it is its turn, and gives the turn back to the queue', async () => {
    const run = placed();
    const released: string[] = [];
    await w.withWorker({ ...bookkeeping, takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }) }, async (taskQueue, calls) => {
      // A stand-in for the server's queue: it records what the run signals back.
      const queue = await w.env.client.workflow.start('serverRunQueueWorkflow', { taskQueue: `${taskQueue}-nobody`, workflowId: serverRunQueueWorkflowId(run.serverId), args: [{ serverId: run.serverId, organizationId: 'org' }] });
      const handle = await startRun(taskQueue, run);
      expect(await waitingForTurn(handle)).toBe('waiting for its turn on web-1');
      expect(names(calls)).toEqual(['takeTurn']);
      await handle.signal(TURN_SIGNAL);
      await expect(handle.result()).resolves.toMatchObject({ status: 'success', steps: 1 });
      expect(names(calls)).toEqual(['takeTurn', 'beginOneServerRun', 'startStep']);
      const history = await queue.fetchHistory();
      for (const event of history.events ?? []) {
        const signal = event.workflowExecutionSignaledEventAttributes;
        if (signal?.signalName === 'released') released.push(JSON.parse(Buffer.from(signal.input!.payloads![0]!.data!).toString()));
      }
      await queue.terminate('test over');
    });
    expect(released).toEqual([run.runId]);
  });

  test('cancelled while it waits: it never begins, its run is cancelled, a Cancelled workflow', async () => {
    const run = placed();
    await w.withWorker({ ...bookkeeping, takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }) }, async (taskQueue, calls) => {
      const handle = await startRun(taskQueue, run);
      await waitingForTurn(handle);
      await handle.cancel();
      await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
      expect(names(calls)).toEqual(['takeTurn', 'cancelQueuedRun']);
      expect(await outcome(handle)).toBe('CANCELLED');
    });
  });

  test('its server cannot take it (deleted meanwhile): it fails unrun, a Failed workflow saying why', async () => {
    const run = placed();
    await w.withWorker({ ...bookkeeping, takeTurn: async (): Promise<TurnOutcome> => ({ failed: 'Not run: the server no longer exists' }) }, async (taskQueue, calls) => {
      const handle = await startRun(taskQueue, run);
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'DeploymentRunFailed', message: 'Not run: the server no longer exists' } });
      expect(names(calls)).toEqual(['takeTurn']);
    });
  });

  test('its run ended while it asked (cancelled by a person): it ends as the run did', async () => {
    const run = placed();
    await w.withWorker(
      { ...bookkeeping, takeTurn: async (): Promise<TurnOutcome> => ({ turn: true, steps: null }), endedRun: async () => ({ status: 'cancelled', error: null }) },
      async (taskQueue, calls) => {
        const handle = await startRun(taskQueue, run);
        await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
        expect(names(calls)).toEqual(['takeTurn', 'endedRun', 'cancelOwnWorkflow']);
      },
    );
  });
});

const startQueue = (taskQueue: string, serverId: string) =>
  w.env.client.workflow.start('serverRunQueueWorkflow', { taskQueue, workflowId: serverRunQueueWorkflowId(serverId), args: [{ serverId, organizationId: 'org' }] });

describe('serverRunQueueWorkflow: hands the turn to the runs waiting, in order', () => {
  const next = (run: QueuedRun, extra: Partial<NextRun> = {}): NextRun => ({ ...run, workflowId: deploymentRunWorkflowId(run.runId), fleetTarget: false, ...extra });

  test('a failed run is an ordinary outcome: the queue gives the turn to the next run, each waiting in its own workflow', async () => {
    const serverId = `srv-${id()}`;
    const [fails, succeeds] = [placed(serverId), placed(serverId)];
    const turns = [fails, succeeds];
    await w.withWorker(
      {
        ...bookkeeping,
        takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }),
        nextQueuedRun: async () => {
          const run = turns.shift();
          return run ? next(run) : null;
        },
        startStep: async ({ runId }: { runId: string }): Promise<StepResult> => (runId === fails.runId ? { status: 'failed', exitCode: 1, timedOut: false } : { status: 'success', exitCode: 0, timedOut: false }),
      },
      async (taskQueue) => {
        const runs = [await startRun(taskQueue, fails), await startRun(taskQueue, succeeds)];
        await Promise.all(runs.map(waitingForTurn));
        const queue = await startQueue(taskQueue, serverId);
        expect(await outcome(runs[0]!)).toBe('FAILED');
        expect(await outcome(runs[1]!)).toBe('COMPLETED');
        expect(await eventually(() => currentDetails(queue), (d) => d.startsWith('idle'))).toBe('idle: no run waiting for its turn');
        await queue.terminate('test over');
      },
    );
  });

  test('a one-server run (no workflow until its turn, as its trigger leaves it): the queue starts it, its turn given', async () => {
    const run = placed();
    let served = false;
    await w.withWorker(
      {
        ...bookkeeping,
        nextQueuedRun: async () => {
          if (served) return null;
          served = true;
          return next(run);
        },
      },
      async (taskQueue, calls) => {
        const queue = await startQueue(taskQueue, run.serverId);
        const started = w.env.client.workflow.getHandle(deploymentRunWorkflowId(run.runId));
        // Started by the queue: not there at first.
        expect(await eventually(() => started.describe().then((d) => d.status.name, () => 'not started'), (status) => !['not started', 'RUNNING'].includes(status))).toBe('COMPLETED');
        // The queue asks for the next run once its child has ended: wait until it says it is idle.
        expect(await eventually(() => currentDetails(queue), (d) => d.startsWith('idle'))).toBe('idle: no run waiting for its turn');
        // Its turn was given: it began without asking for it.
        expect(names(calls)).toEqual(['nextQueuedRun', 'beginOneServerRun', 'startStep', 'nextQueuedRun']);
        expect((await started.describe()).parentExecution?.workflowId).toBe(serverRunQueueWorkflowId(run.serverId));
        await queue.terminate('test over');
      },
    );
  });

  test('a run whose workflow ended before its turn (terminated in Temporal): failed, and the queue moves on', async () => {
    const run = placed();
    let served = false;
    await w.withWorker(
      {
        ...bookkeeping,
        takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }),
        nextQueuedRun: async () => {
          if (served) return null;
          served = true;
          return next(run);
        },
      },
      async (taskQueue, calls) => {
        const handle = await startRun(taskQueue, run);
        await waitingForTurn(handle);
        await handle.terminate('by hand');
        const queue = await startQueue(taskQueue, run.serverId);
        await eventually(async () => names(calls), (n) => n.includes('failQueuedRun'));
        expect(calls.find(([n]) => n === 'failQueuedRun')![1]).toEqual({ runId: run.runId, error: 'The run’s workflow ended before its turn came (terminated in Temporal?)' });
        expect(await eventually(() => currentDetails(queue), (d) => d.startsWith('idle'))).toBe('idle: no run waiting for its turn');
        await queue.terminate('test over');
      },
    );
  });
});

describe('deploymentFleetWorkflow and its targets', () => {
  const fleet = (): FleetRunInput => ({ runId: id(), organizationId: 'org', deploymentId: 'dep', deploymentName: 'fleet-release', triggeredBy: 'API token: ci' });
  const targets = (count: number): FleetTarget[] => Array.from({ length: count }, (_, i) => ({ runId: id(), serverId: `srv-${i}-${id()}`, serverTitle: `web-${i + 1}` }));
  const startFleet = (taskQueue: string, run: FleetRunInput) =>
    w.env.client.workflow.start('deploymentFleetWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(run.runId), args: [run] });
  const fleetMocks = (batches: FleetTarget[][], maxFailures: number) => ({
    ...bookkeeping,
    beginFleet: async () => ({ total: batches.flat().length, batches: batches.length, maxFailures }),
    batchTargets: async ({ batch }: { batch: number }) => batches[batch - 1]!,
    closeWaitingTargets: async () => 0,
    // No change freeze covers the next batch.
    holdIfFrozen: async () => null,
  });

  test('closed before it began (cancelled while queued): a Cancelled workflow, nothing run', async () => {
    const run = fleet();
    await w.withWorker({ ...bookkeeping, beginFleet: async () => null, endedRun: async () => ({ status: 'cancelled', error: null }) }, async (taskQueue, calls) => {
      const handle = await startFleet(taskQueue, run);
      await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
      expect(names(calls)).toEqual(['beginFleet', 'endedRun', 'cancelOwnWorkflow']);
    });
  });

  test('more targets failed than max_failures allows: later batches skipped, the run fails naming how many and the first', async () => {
    const run = fleet();
    const [first, second] = [targets(2), targets(2)];
    await w.withWorker(
      {
        ...fleetMocks([first, second], 0),
        takeTurn: async ({ runId }: { runId: string }): Promise<TurnOutcome> => (runId === first[1]!.runId ? { failed: 'Not run: the server no longer exists' } : { turn: true, steps: [step('only')] }),
      },
      async (taskQueue, calls) => {
        const handle = await startFleet(taskQueue, run);
        await expect(handle.result()).rejects.toMatchObject({
          cause: { type: 'DeploymentRunFailed', message: '1 of 4 targets failed (more than the 0 allowed: later batches skipped); first: Not run: the server no longer exists' },
        });
        expect(calls.filter(([n]) => n === 'takeTurn')).toHaveLength(2);
        expect(calls.find(([n]) => n === 'closeWaitingTargets')![1]).toEqual({ runId: run.runId, to: 'skipped', fromBatch: 2 });
        expect(calls.at(-1)).toEqual(['finishRun', { runId: run.runId, status: 'failed', error: expect.stringMatching(/^1 of 4 targets failed/) }]);
        // The batch's targets shared one workflow: a target's failure is an outcome of the group, which completed.
        const group = w.env.client.workflow.getHandle(fleetTargetGroupWorkflowId(run.runId, 1, 1));
        expect(await group.result()).toEqual([
          { failed: null, unhealthy: null },
          { failed: 'Not run: the server no longer exists', unhealthy: null },
        ]);
      },
    );
  });

  test('failures within max_failures: every batch runs, and the run still fails (any failed target fails it)', async () => {
    const run = fleet();
    const [first, second] = [targets(1), targets(1)];
    await w.withWorker(
      {
        ...fleetMocks([first, second], 1),
        takeTurn: async (): Promise<TurnOutcome> => ({ turn: true, steps: [step('only')] }),
        startStep: async ({ runId }: { runId: string }): Promise<StepResult> => (runId === first[0]!.runId ? { status: 'failed', exitCode: 3, timedOut: false } : { status: 'success', exitCode: 0, timedOut: false, endedRun: true }),
      },
      async (taskQueue, calls) => {
        const handle = await startFleet(taskQueue, run);
        await expect(handle.result()).rejects.toMatchObject({ cause: { message: '1 of 2 targets failed (1 allowed: every batch ran); first: Step "only" (1/1) failed on web-1: exit code 3' } });
        expect(names(calls)).not.toContain('closeWaitingTargets');
      },
    );
  });

  test('cancelled while a target runs: the target’s command is cancelled, the waiting targets cancelled, a Cancelled run', async () => {
    const run = fleet();
    const [first, second] = [targets(1), targets(1)];
    let own = '';
    await w.withWorker(
      { ...fleetMocks([first, second], 0), takeTurn: async (): Promise<TurnOutcome> => ({ turn: true, steps: [step('long')] }), startStep: async () => ({ handedOff: own }), awaitStep: untilCancelled },
      async (taskQueue, calls: Call[]) => {
        own = taskQueue;
        const handle = await startFleet(taskQueue, run);
        await eventually(async () => names(calls), (n) => n.includes('awaitStep'));
        await handle.cancel();
        await expect(handle.result()).rejects.toMatchObject({ cause: expect.any(CancelledFailure) });
        expect(names(calls)).toEqual(expect.arrayContaining(['cancelSteps', 'closeWaitingTargets']));
        expect(calls.find(([n]) => n === 'closeWaitingTargets')![1]).toEqual({ runId: run.runId, to: 'cancelled', fromBatch: 0 });
        expect(calls.at(-1)).toEqual(['finishRun', { runId: run.runId, status: 'cancelled', error: null }]);
        expect(await outcome(w.env.client.workflow.getHandle(fleetTargetGroupWorkflowId(run.runId, 1, 1)))).toBe('CANCELLED');
        expect(await outcome(handle)).toBe('CANCELLED');
      },
    );
  });

  test('a target waiting for its turn when its fleet run is cancelled: never begins, cancelled', async () => {
    const run = fleet();
    const [only] = [targets(1)];
    await w.withWorker({ ...fleetMocks([only], 0), takeTurn: async (): Promise<TurnOutcome> => ({ queued: true }) }, async (taskQueue, calls) => {
      const handle = await startFleet(taskQueue, run);
      const target = w.env.client.workflow.getHandle(fleetTargetGroupWorkflowId(run.runId, 1, 1));
      await eventually(() => currentDetails(target).catch(() => ''), (d) => d.includes('1 waiting for their turn'));
      await handle.cancel();
      expect(await outcome(target)).toBe('CANCELLED');
      expect(names(calls)).toEqual(expect.arrayContaining(['takeTurn', 'cancelQueuedRun']));
      expect(names(calls)).not.toContain('beginOneServerRun');
    });
  });

  test('a target is asked for its turn without a place (it takes one when its batch starts)', async () => {
    const run = fleet();
    const [only] = [targets(1)];
    await w.withWorker({ ...fleetMocks([only], 0), takeTurn: async (): Promise<TurnOutcome> => ({ turn: true, steps: [step('only')] }) }, async (taskQueue, calls) => {
      await expect((await startFleet(taskQueue, run)).result()).resolves.toMatchObject({ status: 'success', targets: 1 });
      // With the place, the workflow it shares with the batch's other targets: its queue tells that one "your turn".
      expect(calls.find(([n]) => n === 'takeTurn')![1]).toEqual({ runId: only[0]!.runId, serverId: only[0]!.serverId, organizationId: 'org', workflowId: fleetTargetGroupWorkflowId(run.runId, 1, 1) });
    });
  });

  test('a target waiting in its group: its queue gives it the turn by name, it begins (the one that had its turn is not begun again), runs, gives the turn back', async () => {
    const run = fleet();
    const [batch] = [targets(2)];
    const [waiting] = batch as [FleetTarget, FleetTarget];
    const groupId = fleetTargetGroupWorkflowId(run.runId, 1, 1);
    let served = false;
    const given: NextRun = {
      runId: waiting.runId, organizationId: 'org', deploymentId: 'dep', serverId: waiting.serverId, deploymentName: 'fleet-release', triggeredBy: 'API token: ci', serverTitle: waiting.serverTitle,
      workflowId: groupId, fleetTarget: true, sharedWorkflow: true,
    };
    await w.withWorker(
      {
        ...fleetMocks([batch], 0),
        // The other target's server is free; this one's is busy until its queue gives it the turn.
        takeTurn: async ({ runId }: { runId: string }): Promise<TurnOutcome> => (runId === waiting.runId ? { queued: true } : { turn: true, steps: [step('only')] }),
        endedRun: async () => ({ status: 'running', error: null }),
        nextQueuedRun: async () => {
          if (served) return null;
          served = true;
          return given;
        },
      },
      async (taskQueue, calls) => {
        const handle = await startFleet(taskQueue, run);
        const group = w.env.client.workflow.getHandle(groupId);
        await eventually(() => currentDetails(group).catch(() => ''), (d) => d.startsWith('batch 1: 0 running, 1 waiting for their turn, 1 of 2 ended'));
        const queue = await startQueue(taskQueue, waiting.serverId);
        await expect(handle.result()).resolves.toMatchObject({ status: 'success', targets: 2 });
        // Begun by its turn from the queue: the one run that waited, and only it.
        expect(calls.filter(([n]) => n === 'beginOneServerRun').map(([, input]) => input)).toEqual([{ runId: waiting.runId }]);
        expect(await group.result()).toEqual([{ failed: null, unhealthy: null }, { failed: null, unhealthy: null }]);
        // The turn went back to the queue, which read its next run.
        await eventually(async () => calls.filter(([n]) => n === 'nextQueuedRun').length, (n) => n >= 2);
        await queue.terminate('test over');
      },
    );
  });
});
