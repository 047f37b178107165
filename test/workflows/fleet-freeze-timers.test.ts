import { randomBytes } from 'node:crypto';
import type { FleetPlan, FleetRunInput } from '../../src/domain/contracts/runs';
import { deploymentRunWorkflowId, FREEZES_CHANGED_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { eventually } from '../support/bosun';
import { useTimeSkippingTemporal, type Mocks } from '../support/time-skipping';

/**
 * A fleet run held by a change freeze between batches, on Temporal's time-skipping test server with
 * mocked activities: it waits on a durable timer until the freeze should lift, checks again at least
 * every 2 minutes (a freeze extended), at once on a `freezes-changed` signal, and is cancelled while
 * it waits. What it does with real runs is covered end to end (test/deployments/freezes.test.ts).
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const temporal = useTimeSkippingTemporal();

const fleetRun = (): FleetRunInput => ({ runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', deploymentName: 'release', triggeredBy: 'Carol (person)' });
const plan: FleetPlan = { total: 2, batches: 2, maxFailures: 0 };

/** The fleet's bookkeeping, mocked; `frozenUntil(batch, now)` says until when a freeze covers a batch (null: none). */
function fleetMocks(frozenUntil: (batch: number, now: number) => number | null) {
  const calls: Array<{ name: string; input: unknown; at: number }> = [];
  const base: Mocks = {
    beginFleet: async () => plan,
    batchTargets: async () => [],
    closeWaitingTargets: async () => 0,
    finishRun: async () => undefined,
    holdIfFrozen: async (input: { batch: number }) => {
      const until = frozenUntil(input.batch, await temporal().now());
      return until === null ? null : { names: ['black-friday'], until };
    },
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
  return { mocks, named: (name: string) => calls.filter((c) => c.name === name) };
}

const start = (taskQueue: string, input: FleetRunInput) =>
  temporal().env.client.workflow.start('deploymentFleetWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(input.runId), args: [input] });

describe('a fleet run held by a change freeze, in test time', () => {
  test('a freeze over batch 2 for twelve hours: batch 2 starts only after it ends, the run re-checking every 2 minutes meanwhile (continuing as new as its history grows)', async () => {
    let ends = 0;
    const { mocks, named } = fleetMocks((batch, now) => {
      if (batch !== 2) return null;
      ends ||= now + 12 * HOUR;
      return now < ends ? ends : null;
    });
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      expect(await handle.result()).toMatchObject({ status: 'success' });
      const batches = named('batchTargets');
      expect([...new Set(batches.map((c) => (c.input as { batch: number }).batch))]).toEqual([1, 2]);
      expect(batches.find((c) => (c.input as { batch: number }).batch === 2)!.at).toBeGreaterThanOrEqual(ends);
      // Checked again every 2 minutes for twelve hours (and once more on each continue-as-new), not once a second nor only at the end.
      const checks = named('holdIfFrozen').filter((c) => (c.input as { batch: number }).batch === 2);
      expect(checks.length).toBeGreaterThan(12 * 30 - 5);
      expect(checks.length).toBeLessThan(12 * 30 + 10);
      // Its history stayed short: the run continued as new while it waited.
      const first = await temporal().env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      expect(first.status.name).toBe('CONTINUED_AS_NEW');
    });
  }, 240_000);

  test('a freeze deleted: the signal wakes the run at once, without waiting for its timer', async () => {
    let lifted = false;
    const { mocks, named } = fleetMocks((batch, now) => (batch === 2 && !lifted ? now + 24 * HOUR : null));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      await eventually(async () => named('holdIfFrozen').length, (n) => n >= 2);
      lifted = true;
      const before = await temporal().now();
      await handle.signal(FREEZES_CHANGED_SIGNAL);
      // Local activities run at least once: on a loaded machine a workflow task may time out and run them again.
      const secondBatch = () => named('batchTargets').find((c) => (c.input as { batch: number }).batch === 2);
      await eventually(async () => secondBatch(), (call) => call !== undefined);
      expect(secondBatch()!.at - before).toBeLessThan(2 * MINUTE);
      expect(await handle.result()).toMatchObject({ status: 'success' });
    });
  }, 120_000);

  test('a frozen run cancelled: its waiting targets and the run end cancelled, batch 2 never starts', async () => {
    const { mocks, named } = fleetMocks((batch, now) => (batch === 2 ? now + 24 * HOUR : null));
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await start(taskQueue, fleetRun());
      await eventually(async () => named('holdIfFrozen').length, (n) => n >= 2);
      await handle.cancel();
      await expect(handle.result()).rejects.toThrow();
      expect(named('batchTargets').filter((c) => (c.input as { batch: number }).batch === 2)).toEqual([]);
      expect(named('closeWaitingTargets').map((c) => c.input)).toEqual([expect.objectContaining({ to: 'cancelled' })]);
      expect(named('finishRun').map((c) => c.input)).toEqual([expect.objectContaining({ status: 'cancelled' })]);
    });
  }, 120_000);
});

describe('a one-server run whose turn comes during a change freeze, in test time', () => {
  const oneServerRun = () => ({ runId: randomBytes(12).toString('hex'), organizationId: 'org', deploymentId: 'dep', serverId: 'srv', deploymentName: 'release', triggeredBy: 'ci (service account)', serverTitle: 'web-1' });

  test('frozen for six hours at its begin: no step starts until the freeze lifts, checked at its end and every 30 minutes meanwhile', async () => {
    let ends = 0;
    const calls: Array<{ name: string; at: number }> = [];
    const record = (name: string, fn: () => Promise<unknown>) => async () => {
      calls.push({ name, at: await temporal().now() });
      return fn();
    };
    const frozen = async () => {
      const now = await temporal().now();
      ends ||= now + 6 * HOUR;
      return now < ends ? { names: ['migration-weekend'], until: ends } : null;
    };
    const mocks: Mocks = {
      beginOneServerRun: record('beginOneServerRun', async () => ({ steps: [{ name: 'only', command: 'x', timeout_seconds: null, retries: 0, continue_on_error: false }], frozen: await frozen() })),
      holdIfFrozen: record('holdIfFrozen', frozen),
      startStep: record('startStep', async () => ({ status: 'success', exitCode: 0, timedOut: false, endedRun: true })),
      finishRun: record('finishRun', async () => undefined),
    };
    await temporal().withWorker(mocks, async (taskQueue) => {
      const handle = await temporal().env.client.workflow.start('deploymentRunWorkflow', { taskQueue, workflowId: deploymentRunWorkflowId(oneServerRun().runId), args: [oneServerRun()] });
      expect(await handle.result()).toMatchObject({ status: 'success' });
      const step = calls.find((c) => c.name === 'startStep')!;
      expect(step.at).toBeGreaterThanOrEqual(ends);
      // Six hours at one check per 30 minutes: 12 checks (the last one finds it lifted), not one a second.
      const checks = calls.filter((c) => c.name === 'holdIfFrozen');
      expect(checks.length).toBeGreaterThanOrEqual(12);
      expect(checks.length).toBeLessThanOrEqual(14);
      expect(checks.at(-1)!.at).toBeGreaterThanOrEqual(ends);
    });
  }, 120_000);
});
