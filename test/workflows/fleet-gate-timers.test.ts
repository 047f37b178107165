import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { FleetPlan, FleetRunInput, GateDecision, GateDecisionResult, PauseRequest, PauseResult } from '../../src/domain/contracts/runs';
import { deploymentRunWorkflowId, GATE_DECISION_UPDATE, PAUSE_UPDATE, RESUME_UPDATE } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/bosun';
import { useTimeSkippingTemporal, type Mocks } from '../support/time-skipping';

/**
 * A fleet run's gates and pauses on Temporal's time-skipping test server, with mocked activities: a
 * 24-hour gate warns of its expiry an hour before and expires in milliseconds of test time; an approval in time lets the run go on; a pause
 * holds for days until a resume. What they do with real runs is covered end to end
 * (test/deployments/gates.test.ts).
 */

const HOUR = 3600_000;
const temporal = useTimeSkippingTemporal();

const person = { type: 'person' as const, id: 'a'.repeat(24), name: 'Alice', token_id: null };
const fleetRun = (): FleetRunInput => ({ runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', deploymentName: 'release', triggeredBy: 'Carol (person)' });
const plan = (extra: Partial<FleetPlan> = {}): FleetPlan => ({ total: 4, batches: 2, maxFailures: 0, ...extra });
const dayGate = { beforeBatch: 2, approvals: 1, expiresIn: '24h', expiresInMs: 24 * HOUR };

/** The activities a fleet run's bookkeeping calls, each call recorded with the server time (targets: none, so no child runs). */
function fleetMocks(planned: FleetPlan, extra: Mocks = {}) {
  const calls: Array<{ name: string; input: unknown; at: number }> = [];
  const base: Mocks = {
    beginFleet: async () => planned,
    batchTargets: async () => [],
    closeWaitingTargets: async () => 0,
    finishRun: async () => undefined,
    openGate: async (input: { expiresAt: number }) => ({ expiresAt: input.expiresAt }),
    expireGate: async () => 'expired',
    warnGateExpiring: async () => undefined,
    recordGateDecision: async (): Promise<GateDecisionResult> => ({ recorded: true, approvals: 1, outcome: 'approved' }),
    requestPause: async (): Promise<PauseResult> => ({ recorded: true }),
    holdPaused: async () => true,
    holdIfFrozen: async () => null,
    resumeRun: async (): Promise<PauseResult> => ({ recorded: true }),
    ...extra,
  };
  const mocks = Object.fromEntries(
    Object.entries(base).map(([name, mock]) => [
      name,
      async (input: unknown) => {
        calls.push({ name, input, at: await temporal().now() });
        return mock(input);
      },
    ]),
  );
  const named = (name: string) => calls.filter((c) => c.name === name);
  return { mocks, calls, named };
}

/** How a workflow ended when it failed (null when it completed). */
const failureOf = (handle: { result(): Promise<unknown> }) =>
  handle.result().then(
    () => null,
    (error: unknown) => error,
  );

const start = (taskQueue: string, input: FleetRunInput) =>
  temporal().env.client.workflow.start('deploymentFleetWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });

describe('a fleet run’s approval gate, in test time', () => {
  test('a 24-hour gate nobody decides expires after 24 hours: the run fails “approval expired after 24h”, batch 2 never starts', async () => {
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const input = fleetRun();
      const handle = await start(taskQueue, input);
      const failure = await failureOf(handle);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(((failure as WorkflowFailedError).cause as Error).message).toBe('approval expired after 24h');
      const [opened] = named('openGate');
      const [expired] = named('expireGate');
      // Opened before batch 2 (after batch 1), expired a day of server time later.
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1]);
      // (To the second: the store's expiry counts from the workflow's clock, a moment before the activity's call was recorded.)
      expect((expired!.at - opened!.at) / HOUR).toBeCloseTo(24, 3);
      // An hour before it expired, the run told of it (run.approval_expiring), once.
      const warned = named('warnGateExpiring');
      expect(warned.map((c) => c.input)).toEqual([{ runId: input.runId, beforeBatch: 2, expiresAt: (opened!.input as { expiresAt: number }).expiresAt }]);
      expect((warned[0]!.at - opened!.at) / HOUR).toBeCloseTo(23, 3);
      expect((opened!.input as { expiresAt: number; openedAt: number }).expiresAt - (opened!.input as { openedAt: number }).openedAt).toBe(24 * HOUR);
      expect(named('closeWaitingTargets').map((c) => c.input)).toEqual([{ runId: input.runId, to: 'skipped', fromBatch: 2 }]);
      expect(named('finishRun').map((c) => c.input)).toEqual([{ runId: input.runId, status: 'failed', error: 'approval expired after 24h' }]);
    });
  });

  test('approved an hour in: batch 2 runs and the run succeeds; nothing expires later', async () => {
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const input = fleetRun();
      const handle = await start(taskQueue, input);
      await eventually(async () => named('openGate').length, (n) => n === 1);
      await temporal().env.sleep(HOUR);
      const decision: GateDecision = { kind: 'approve', by: person, comment: 'ok' };
      const answer = await handle.executeUpdate<GateDecisionResult, [GateDecision]>(GATE_DECISION_UPDATE, { args: [decision] });
      expect(answer).toEqual({ recorded: true, approvals: 1, outcome: 'approved' });
      expect(await handle.result()).toMatchObject({ status: 'success', targets: 4 });
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1, 2]);
      expect(named('expireGate')).toEqual([]);
      expect(named('warnGateExpiring')).toEqual([]);
      expect(named('recordGateDecision').map((c) => c.input)).toEqual([{ runId: input.runId, beforeBatch: 2, decision }]);
    });
  });

  test('a decision that arrives while the gate is being opened (as after a worker died, when the opening is done again) is taken, not refused', async () => {
    let opening: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (opening = resolve));
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }), {
      // The store has the gate open (the API saw it) while the workflow still waits for this answer.
      openGate: async (input: { expiresAt: number }) => {
        await opened;
        return { expiresAt: input.expiresAt };
      },
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      await eventually(async () => named('openGate').length, (n) => n === 1);
      const decision: GateDecision = { kind: 'approve', by: person, comment: 'as soon as it opened' };
      const answer = handle.executeUpdate<GateDecisionResult, [GateDecision]>(GATE_DECISION_UPDATE, { args: [decision] });
      await eventually(async () => named('recordGateDecision').length, (n) => n === 1);
      opening();
      expect(await answer).toEqual({ recorded: true, approvals: 1, outcome: 'approved' });
      expect(await handle.result()).toMatchObject({ status: 'success', targets: 4 });
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1, 2]);
    });
  });

  test('a decision that arrives before the run reaches the gate the store has open (a worker redoing what led there) waits for it', async () => {
    let batchDone: () => void = () => undefined;
    const batchOne = new Promise<void>((resolve) => (batchDone = resolve));
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }), {
      // Batch 1, done again after a worker's death, while the store already has batch 2's gate open.
      batchTargets: async (input: { batch: number }) => {
        if (input.batch === 1) await batchOne;
        return [];
      },
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      await eventually(async () => named('batchTargets').length, (n) => n === 1);
      const answer = handle.executeUpdate<GateDecisionResult, [GateDecision]>(GATE_DECISION_UPDATE, { args: [{ kind: 'approve', by: person, comment: 'early' }] });
      batchDone();
      expect(await answer).toEqual({ recorded: true, approvals: 1, outcome: 'approved' });
      expect(await handle.result()).toMatchObject({ status: 'success', targets: 4 });
    });
  });

  test('a gate opened again keeps its first expiry: the store’s, not a new 24 hours', async () => {
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }), {
      // Opened before, by a worker that died: it expires an hour from now.
      openGate: async (input: { openedAt: number }) => ({ expiresAt: input.openedAt + HOUR }),
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      const failure = await failureOf(handle);
      expect(((failure as WorkflowFailedError).cause as Error).message).toBe('approval expired after 24h');
      expect(Math.round((named('expireGate')[0]!.at - named('openGate')[0]!.at) / 60_000)).toBe(60);
    });
  });

  test('a gate the store finds decided when the run comes back to it (approved, or rejected, before a worker died) stands: no wait, no expiry', async () => {
    const { mocks, named } = fleetMocks(plan({ gates: [dayGate] }), {
      openGate: async (input: { openedAt: number }) => ({ expiresAt: input.openedAt + HOUR, outcome: 'approved', rejection: null }),
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      expect(await handle.result()).toMatchObject({ status: 'success', targets: 4 });
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1, 2]);
      expect([named('expireGate'), named('warnGateExpiring'), named('recordGateDecision')]).toEqual([[], [], []]);
    });
    const rejected = fleetMocks(plan({ gates: [dayGate] }), {
      openGate: async (input: { openedAt: number }) => ({ expiresAt: input.openedAt + HOUR, outcome: 'rejected', rejection: 'approval rejected by Alice: not today' }),
    });
    await temporal().withWorker(rejected.mocks, async (taskQueue) => {
      const failure = await failureOf(await start(taskQueue, fleetRun()));
      expect(((failure as WorkflowFailedError).cause as Error).message).toBe('approval rejected by Alice: not today');
      expect(rejected.named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1]);
      expect(rejected.named('expireGate')).toEqual([]);
    });
  });

  test('a decision while no gate is open is refused by the workflow without being recorded', async () => {
    const { mocks, named } = fleetMocks(plan());
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, { ...fleetRun() });
      // The decision waits a while for a gate (awaiting the result lets test time run on); the run ends without one.
      const decided = handle.executeUpdate<GateDecisionResult, [GateDecision]>(GATE_DECISION_UPDATE, { args: [{ kind: 'approve', by: person, comment: null }] });
      const [refused] = await Promise.all([decided.then(() => null, (error: unknown) => error), handle.result()]);
      expect(refused).toBeInstanceOf(Error);
      expect(named('recordGateDecision')).toEqual([]);
    });
  });
});

describe('a batch’s soak and health check, in test time', () => {
  test('a 2-hour soak waits two hours of server time before the check; a check failing after its retries, 10 minutes apart, fails the run', async () => {
    const target = { runId: 't1', serverId: 's1', serverTitle: 'web-1' };
    const { mocks, named } = fleetMocks(plan({ batches: 1, total: 1, healthCheck: { command: 'curl -fsS localhost/health', soakSeconds: 7200, timeoutSeconds: 10, retries: 2, intervalSeconds: 600 } }), {
      batchTargets: async () => [target],
      // The target's own workflow: its turn taken, no step to run.
      takeTurn: async () => ({ turn: true, steps: [] }),
      runHealthCheck: async () => ({ healthy: false, exitCode: 7, timedOut: false, output: 'connection refused\n' }),
      recordUnreachableHealthCheck: async () => undefined,
      finishHealthCheck: async () => undefined,
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const input = fleetRun();
      const handle = await start(taskQueue, input);
      const failure = await failureOf(handle);
      expect(((failure as WorkflowFailedError).cause as Error).message).toBe(
        '1 of 1 targets failed (more than the 0 allowed: later batches skipped); first: Health check "curl -fsS localhost/health" failed on web-1 after 3 attempts: exit code 7: connection refused',
      );
      const checks = named('runHealthCheck').map((c) => c.at);
      expect(checks).toHaveLength(3);
      expect(Math.floor((checks[0]! - named('batchTargets')[0]!.at) / 60_000)).toBe(120);
      expect(checks.slice(1).map((at, i) => Math.floor((at - checks[i]!) / 60_000))).toEqual([10, 10]);
      expect(named('finishHealthCheck').map((c) => c.input)).toEqual([{ runId: 't1', healthy: false, error: expect.stringContaining('after 3 attempts') }]);
    });
  });
});

describe('a fleet run’s pause, in test time', () => {
  test('a pause asked during batch 1 holds the run before batch 2 for three days, until a resume', async () => {
    let releaseBatch: () => void = () => undefined;
    const batchOne = new Promise<void>((resolve) => (releaseBatch = resolve));
    const { mocks, named } = fleetMocks(plan(), {
      // Batch 1 "runs" until the test has asked for the pause.
      batchTargets: async (input: { batch: number }) => {
        if (input.batch === 1) await batchOne;
        return [];
      },
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      await eventually(async () => named('batchTargets').length, (n) => n === 1);
      const request: PauseRequest = { by: person, reason: 'watching' };
      expect(await handle.executeUpdate<PauseResult, [PauseRequest]>(PAUSE_UPDATE, { args: [request] })).toEqual({ recorded: true });
      releaseBatch();
      await eventually(async () => named('holdPaused').length, (n) => n === 1);
      await temporal().env.sleep(72 * HOUR);
      expect(named('batchTargets')).toHaveLength(1);
      expect(await handle.executeUpdate<PauseResult, [PauseRequest]>(RESUME_UPDATE, { args: [request] })).toEqual({ recorded: true });
      expect(await handle.result()).toMatchObject({ status: 'success' });
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([1, 2]);
    });
  });

  test('a resume the store refuses because it holds no pause any more (recorded before a worker died, its handler run again) still resumes the run', async () => {
    const { mocks, named } = fleetMocks(plan(), {
      // The store's pause was held (the run paused before batch 2); the resume was recorded by a handler whose task was lost.
      resumeRun: async (): Promise<PauseResult> => ({ refused: 'not_paused', message: 'The run is not paused (it is running)', pause_asked: false }),
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, { ...fleetRun(), progress: { plan: plan(), nextBatch: 2, failed: 0, firstFailure: null, startedAt: 0, pauseAsked: true } });
      await eventually(async () => named('holdPaused').length, (n) => n === 1);
      const request: PauseRequest = { by: person, reason: 'go on' };
      expect(await handle.executeUpdate<PauseResult, [PauseRequest]>(RESUME_UPDATE, { args: [request] })).toMatchObject({ refused: 'not_paused' });
      expect(await handle.result()).toMatchObject({ status: 'success' });
      expect(named('batchTargets').map((c) => (c.input as { batch: number }).batch)).toEqual([2]);
    });
  });
});
