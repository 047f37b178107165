import { CancellationScope, CancelledFailure, condition, isCancellation, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { FleetGate, FleetPlan, FleetRunInput, FleetTarget } from '../src/domain/contracts/runs';
import type { fleetGuards } from './fleet-guards';
import { targetFailureLine } from './failures';
import { runTarget } from './fleet-targets';
import { targetHealthCheck } from './health-checks';
import { bookkeeping } from './run-activities';

/** How many targets failed so far, and the first failure's line: what the fleet run ends with. */
export interface FailureTally {
  failed: number;
  firstFailure: string | null;
}

export interface WindowRun {
  run: FleetRunInput;
  plan: FleetPlan;
  guards: ReturnType<typeof fleetGuards>;
  tally: FailureTally;
  /** The group to begin with (past 1 after a continue-as-new). */
  fromGroup: number;
  historyFull: () => boolean;
  /** Continues as new before `group`, nothing running then. */
  continueFrom: (group: number) => Promise<never>;
}

/**
 * A fleet run's rolling window (`max_concurrency`): at most that many targets at once, in order, the
 * next starting as soon as one ends — its health check, if any, done in its slot (after its soak) —
 * never waiting for a batch's slowest. Past `max_failures` no new target starts: the running ones
 * finish and the rest are skipped. Its targets come group by group (domain/deployments/window.ts):
 * before a group, a change freeze holds new starts; a gate (standing before its target's group)
 * waits for every running target to end, then for people; a pause, whenever asked, too. A long
 * history continues as new before a group, once the window has drained. Null when it ran to its
 * end, or the gate that closed with why.
 */
export async function runWindow({ run, plan, guards, tally, fromGroup, historyFull, continueFrom }: WindowRun): Promise<{ gate: FleetGate; error: string } | null> {
  const slots = plan.maxConcurrency ?? plan.total;
  const tooManyFailures = () => tally.failed > plan.maxFailures;
  const checkHealth = plan.healthCheck ? targetHealthCheck(plan.healthCheck) : null;
  const soakMs = (plan.healthCheck?.soakSeconds ?? 0) * 1000;
  const inFlight = new Set<Promise<void>>();
  const drain = () => condition(() => inFlight.size === 0);
  const fail = (line: string) => {
    tally.failed += 1;
    tally.firstFailure ??= line;
  };
  const inSlot = async (target: FleetTarget, group: number) => {
    try {
      await runTarget(run, target, group, `group ${group} of a window of ${slots}`);
    } catch (error) {
      fail(targetFailureLine(target, error));
      return;
    }
    if (!checkHealth) return;
    if (soakMs) await sleep(soakMs);
    const unhealthy = await checkHealth(target);
    if (unhealthy !== null) fail(unhealthy);
  };
  const start = (target: FleetTarget, group: number) => {
    // A cancelled check ends with its run (the loop below sees the cancel); anything else is a bug and fails the task.
    const slot: Promise<void> = inSlot(target, group)
      .catch((error: unknown) => {
        if (!isCancellation(error)) throw error;
      })
      .finally(() => inFlight.delete(slot));
    inFlight.add(slot);
  };
  /** A pause asked holds the run once the running targets ended (status paused: nothing runs). */
  const holdIfPaused = async (group: number) => {
    if (!guards.pauseAsked()) return;
    await drain();
    await guards.holdIfPaused(group, plan.batches);
  };
  try {
    for (let group = fromGroup; group <= plan.batches && !tooManyFailures(); group += 1) {
      if (group > fromGroup && historyFull()) {
        await drain();
        await continueFrom(group);
      }
      await holdIfPaused(group);
      const gate = plan.gates?.find((g) => g.beforeBatch === group);
      if (gate) {
        // People decide on what the targets before it did: every one of them has ended.
        await drain();
        if (tooManyFailures()) break;
        const ended = await guards.awaitGate(gate);
        if (!ended.approved) return { gate, error: ended.error };
      }
      if ((await guards.holdWhileFrozen(group, plan.batches, historyFull)) === 'continue') {
        await drain();
        await continueFrom(group);
      }
      for (const target of await bookkeeping.batchTargets({ runId: run.runId, batch: group })) {
        await condition(() => inFlight.size < slots || tooManyFailures() || guards.pauseAsked());
        await holdIfPaused(group);
        if (tooManyFailures()) break;
        start(target, group);
        setCurrentDetails(`window of ${slots}: ${inFlight.size} running (group ${group}/${plan.batches}); ${tally.failed} of ${plan.total} failed so far (${plan.maxFailures} allowed)`);
      }
    }
    await drain();
  } catch (error) {
    // Cancelled (or anything else): the running targets end first, as a batch's do.
    await Promise.allSettled([...inFlight]);
    throw error;
  }
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled while targets ran');
  if (tooManyFailures()) await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'skipped', fromBatch: 0 });
  return null;
}
