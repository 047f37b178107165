import { allHandlersFinished, CancellationScope, CancelledFailure, condition, continueAsNew, isCancellation, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { failure as failureOf } from '../src/domain/contracts/failure-types';
import type { FleetProgress, FleetResult, FleetRunInput } from '../src/domain/contracts/runs';
import { fleetGuards } from './fleet-guards';
import { runBatch } from './fleet-targets';
import { runWindow } from './fleet-window';
import { checkBatchHealth } from './health-checks';
import { isPatched, PATCHES } from './patches';
import { rollBack } from './rollback';
import { bookkeeping, endAsRecorded } from './run-activities';

/**
 * A fleet execution's history grows by about a dozen events per batch and four per group of its
 * targets (four per target with a workflow each: a rolling window's, or a run started before target
 * groups); between batches, past this length, the run continues as new (no target is running then),
 * so any number of batches fits.
 */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2000;

/** Past this, the run continues as new at its next chance (between batches, or while a freeze holds it). */
const historyFull = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_BEFORE_CONTINUING;

const secondsSince = (startedAt: number) => Math.round((Date.now() - startedAt) / 1000);

/**
 * One fleet run: its targets batch by batch, each batch's targets at once, in groups of up to 40
 * sharing a child workflow (fleet-groups.ts), where each target waits for its turn in its server's
 * queue and runs the steps there. After a batch, if
 * more targets failed than `max_failures` allows, no new batch starts: the rest are skipped and the
 * run fails. Cancelling the workflow cancels every running target (killing its command) and the
 * targets still waiting.
 *
 * Between batches it is guarded (fleet-guards.ts): a pause asked is held before the next batch
 * until a resume; a gate before a batch waits for people's approvals; a rejection or an expiry
 * ends the run, failed, its later batches skipped; a change freeze covering the next batch holds
 * the run (status frozen) until it lifts.
 *
 * With `max_concurrency` the run is a rolling window instead (fleet-window.ts): the same guards,
 * failure threshold and ending, without batches.
 *
 * Its outcome is the run's: completes when every target succeeded, fails naming how many targets
 * failed and the first failure (or why its gate did not open), is cancelled when the run was.
 */
export async function deploymentFleetWorkflow(run: FleetRunInput): Promise<FleetResult> {
  const guards = fleetGuards(run.runId, run.progress?.pauseAsked ?? false);
  let progress: FleetProgress | null = run.progress ?? null;
  if (!progress) {
    const plan = await CancellationScope.nonCancellable(() => bookkeeping.beginFleet({ runId: run.runId }));
    if (!plan) return endAsRecorded(run.runId, { status: 'success', targets: 0, duration_seconds: 0 });
    progress = { plan, nextBatch: 1, failed: 0, firstFailure: null, startedAt: Date.now() };
  }
  const { plan } = progress;
  // The run's start, carried over a continue-as-new (histories of before it was carried count from this workflow's).
  const startedAt = progress.startedAt ?? Date.now();
  let { failed, firstFailure } = progress;
  const tooManyFailures = () => failed > plan.maxFailures;
  /** Cancelled (anything else rethrown): its waiting targets cancelled, the run too. */
  const endCancelled = async (error: unknown): Promise<never> => {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(async () => {
      await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'cancelled', fromBatch: 0 });
      await bookkeeping.finishRun({ runId: run.runId, status: 'cancelled', error: null });
    });
    setCurrentDetails(`cancelled after ${secondsSince(startedAt)} s; ${failed} of ${plan.total} targets had failed`);
    throw error;
  };
  /** A halted run rolls back what it touched, when its deployment says so at once: its error then says how that went. */
  const withRollback = async (error: string) => {
    if (!plan.rollbackAutomatic) return error;
    const summary = await rollBack(run.runId, error);
    return summary ? `${error}; ${summary}` : error;
  };
  /** A gate that did not open ends the run, failed, its later targets skipped (rolled back if its deployment says so). */
  const failAtGate = async (error: string, fromBatch: number, where: string): Promise<never> => {
    await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'skipped', fromBatch });
    const message = await withRollback(error);
    await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: 'failed', error: message }));
    setCurrentDetails(`failed before ${where}: ${message}`);
    await condition(allHandlersFinished);
    throw failureOf('DeploymentRunFailed', message);
  };
  /** Continues as new before batch (or window group) `nextBatch`, nothing running. */
  const continueFrom = async (nextBatch: number, tally = { failed, firstFailure }): Promise<never> => {
    await condition(allHandlersFinished);
    return continueAsNew<typeof deploymentFleetWorkflow>({ ...run, progress: { plan, nextBatch, ...tally, startedAt, ...(guards.pauseAsked() ? { pauseAsked: true } : {}) } });
  };
  try {
    if (plan.maxConcurrency) {
      const tally = { failed, firstFailure }; // the window's count, the run's however it ends
      const closed = await runWindow({ run, plan, guards, tally, fromGroup: progress.nextBatch, historyFull, continueFrom: (group) => continueFrom(group, tally) }).finally(() => ({ failed, firstFailure } = tally));
      if (closed) await failAtGate(closed.error, closed.gate.beforeBatch, `target ${closed.gate.beforeTarget}`);
    }
    for (let batch = progress.nextBatch; !plan.maxConcurrency && batch <= plan.batches; batch += 1) {
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled between batches');
      if (tooManyFailures()) {
        await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'skipped', fromBatch: batch });
        break;
      }
      await guards.holdIfPaused(batch, plan.batches);
      const gate = plan.gates?.find((g) => g.beforeBatch === batch);
      if (gate) {
        const ended = await guards.awaitGate(gate);
        if (!ended.approved) await failAtGate(ended.error, batch, `batch ${batch}/${plan.batches}`);
      }
      // The last word before a batch starts: no batch starts while a change freeze covers it (a long freeze continues as new meanwhile).
      if (isPatched(PATCHES.changeFreezes) && (await guards.holdWhileFrozen(batch, plan.batches, historyFull)) === 'continue') await continueFrom(batch);
      const targets = await bookkeeping.batchTargets({ runId: run.runId, batch });
      setCurrentDetails(`batch ${batch}/${plan.batches}: ${targets.length} targets running; ${failed} of ${plan.total} failed so far (${plan.maxFailures} allowed)`);
      // Without a soak, nothing waits for the rest of the batch: each target is checked as soon as its own steps end.
      const checkAsItEnds = plan.healthCheck?.soakSeconds === 0 && isPatched(PATCHES.healthCheckAsTargetsEnd) ? plan.healthCheck : null;
      const outcomes = await runBatch(run, targets, batch, checkAsItEnds);
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled while targets ran');
      for (const error of [...outcomes.map((o) => o.failed), ...outcomes.map((o) => o.unhealthy)]) {
        if (error === null) continue;
        failed += 1;
        firstFailure ??= error;
      }
      if (!checkAsItEnds && plan.healthCheck) {
        // Steps that exit 0 do not make a healthy service: the batch's succeeded targets are checked before the next batch.
        const succeeded = targets.filter((_, index) => outcomes[index]!.failed === null);
        for (const unhealthy of await checkBatchHealth(succeeded, plan.healthCheck, `batch ${batch}/${plan.batches}`)) {
          failed += 1;
          firstFailure ??= unhealthy;
        }
      }
      const more = batch < plan.batches;
      if (more && historyFull()) await continueFrom(batch + 1);
    }
  } catch (error) {
    return endCancelled(error);
  }
  if (failed > 0) {
    // Any target that failed fails the run: max_failures only decides whether later batches start.
    const [skipped, ranAll] = plan.maxConcurrency ? ['later targets skipped', 'every target ran'] : ['later batches skipped', 'every batch ran'];
    const stopped = tooManyFailures() ? `more than the ${plan.maxFailures} allowed: ${skipped}` : `${plan.maxFailures} allowed: ${ranAll}`;
    const halted = `${failed} of ${plan.total} targets failed (${stopped}); first: ${firstFailure}`;
    let message = halted;
    try {
      if (tooManyFailures()) message = await withRollback(halted);
    } catch (error) {
      return endCancelled(error);
    }
    await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: 'failed', error: message }));
    setCurrentDetails(`failed: ${message}`);
    throw failureOf('DeploymentRunFailed', message);
  }
  await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: 'success', error: null }));
  setCurrentDetails(`succeeded: ${plan.total} targets in ${secondsSince(startedAt)} s`);
  return { status: 'success', targets: plan.total, duration_seconds: secondsSince(startedAt) };
}
