import {
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  defineSignal,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import type { WorkflowOutcomeActivities } from '../activities/workflow-outcome';
import {
  fleetTargetWorkflowId,
  RELEASED_SIGNAL,
  runSearchAttributes,
  serverRunQueueWorkflowId,
  TURN_SIGNAL,
  TURNS_IN_DATABASE,
  type FleetProgress,
  type FleetResult,
  type FleetRunInput,
  type FleetTarget,
  type RunResult,
  type RunStepDefinition,
  type TargetRunInput,
} from './contracts';
import { executeRun } from './deployment-run';
import { failure as failureOf } from './failure-types';
import { firstLine } from './failures';

const bookkeeping = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
  localRetryThreshold: '100 milliseconds',
});
const outcome = proxyLocalActivities<WorkflowOutcomeActivities>({ startToCloseTimeout: '30 seconds' });

export const turnSignal = defineSignal(TURN_SIGNAL);

/**
 * A fleet execution's history grows by about four events per target it runs; between batches, past
 * this length, the run continues as new (no target is running then), so 10,000 targets fit.
 */
const HISTORY_EVENTS_BEFORE_CONTINUING = 2000;

const secondsSince = (startedAt: number) => Math.round((Date.now() - startedAt) / 1000);

/** Why a target failed, in one line: the failure of its workflow (the first failed step, its server and why). */
function targetFailureLine(target: FleetTarget, error: unknown): string {
  const cause = error instanceof ChildWorkflowFailure && error.cause ? error.cause : error;
  if (isCancellation(cause)) return `${target.serverTitle}: cancelled`;
  return firstLine(cause instanceof Error ? cause.message : String(cause));
}

/**
 * One fleet run: its targets batch by batch, each batch's targets at once, each target a child
 * workflow that waits for its turn in its server's queue and runs the steps there. After a batch, if
 * more targets failed than `max_failures` allows, no new batch starts: the rest are skipped and the
 * run fails. Cancelling the workflow cancels every running target (killing its command) and the
 * targets still waiting.
 *
 * Its outcome is the run's: completes when every target succeeded, fails naming how many targets
 * failed and the first failure, is cancelled when the run was.
 */
export async function deploymentFleetWorkflow(run: FleetRunInput): Promise<FleetResult> {
  const startedAt = Date.now();
  let progress: FleetProgress | null = run.progress ?? null;
  if (!progress) {
    const plan = await CancellationScope.nonCancellable(() => bookkeeping.beginFleet({ runId: run.runId }));
    if (!plan) {
      const ended = await bookkeeping.endedRun({ runId: run.runId });
      setCurrentDetails(`nothing ran: the run was already ${ended?.status ?? 'gone'}`);
      if (ended?.status === 'failed') throw failureOf('DeploymentRunFailed', ended.error ?? 'The run failed before it began');
      if (ended?.status === 'success') return { status: 'success', targets: 0, duration_seconds: 0 };
      if (!CancellationScope.current().consideredCancelled) {
        await outcome.cancelOwnWorkflow();
        await CancellationScope.current().cancelRequested;
      }
      throw new CancelledFailure('Cancelled while queued');
    }
    progress = { plan, nextBatch: 1, failed: 0, firstFailure: null };
  }
  const { plan } = progress;
  let { failed, firstFailure } = progress;
  const tooManyFailures = () => failed > plan.maxFailures;
  try {
    for (let batch = progress.nextBatch; batch <= plan.batches; batch += 1) {
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled between batches');
      if (tooManyFailures()) {
        await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'skipped', fromBatch: batch });
        break;
      }
      const targets = await bookkeeping.batchTargets({ runId: run.runId, batch });
      setCurrentDetails(`batch ${batch}/${plan.batches}: ${targets.length} targets running; ${failed} of ${plan.total} failed so far (${plan.maxFailures} allowed)`);
      const results = await Promise.allSettled(targets.map((target) => runTarget(run, target, batch)));
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled while targets ran');
      results.forEach((result, index) => {
        if (result.status === 'fulfilled') return;
        failed += 1;
        firstFailure ??= targetFailureLine(targets[index]!, result.reason);
      });
      const more = batch < plan.batches;
      if (more && (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_BEFORE_CONTINUING)) {
        await continueAsNew<typeof deploymentFleetWorkflow>({ ...run, progress: { plan, nextBatch: batch + 1, failed, firstFailure } });
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(async () => {
      await bookkeeping.closeWaitingTargets({ runId: run.runId, to: 'cancelled', fromBatch: 0 });
      await bookkeeping.finishRun({ runId: run.runId, status: 'cancelled', error: null });
    });
    setCurrentDetails(`cancelled after ${secondsSince(startedAt)} s; ${failed} of ${plan.total} targets had failed`);
    throw error;
  }
  if (failed > 0) {
    // Any target that failed fails the run: max_failures only decides whether later batches start.
    const stopped = tooManyFailures() ? `more than the ${plan.maxFailures} allowed: later batches skipped` : `${plan.maxFailures} allowed: every batch ran`;
    const message = `${failed} of ${plan.total} targets failed (${stopped}); first: ${firstFailure}`;
    await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: 'failed', error: message }));
    setCurrentDetails(`failed: ${message}`);
    throw failureOf('DeploymentRunFailed', message);
  }
  await CancellationScope.nonCancellable(() => bookkeeping.finishRun({ runId: run.runId, status: 'success', error: null }));
  setCurrentDetails(`succeeded: ${plan.total} targets in ${secondsSince(startedAt)} s`);
  return { status: 'success', targets: plan.total, duration_seconds: secondsSince(startedAt) };
}

function runTarget(run: FleetRunInput, target: FleetTarget, batch: number): Promise<RunResult> {
  const input: TargetRunInput = {
    runId: target.runId,
    organizationId: run.organizationId,
    deploymentId: run.deploymentId,
    serverId: target.serverId,
    deploymentName: run.deploymentName,
    triggeredBy: run.triggeredBy,
    serverTitle: target.serverTitle,
    fleetRunId: run.runId,
    batch,
  };
  return executeChild(deploymentTargetWorkflow, {
    workflowId: fleetTargetWorkflowId(run.runId, target.serverId),
    args: [input],
    typedSearchAttributes: runSearchAttributes(input),
    staticSummary: `${run.deploymentName} on ${target.serverTitle} (batch ${batch})`,
    staticDetails: `**Server** ${target.serverTitle} (${target.serverId})\n\n**Fleet run** ${run.runId}\n\n**Target run** ${target.runId}`,
    // The fleet run terminated by hand: its targets are cancelled cleanly, their commands killed.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
}

/**
 * One target of a fleet run: takes a place in its server's queue, and the server's turn with it when
 * nothing is ahead of it there; otherwise waits for the queue to give it its turn (runs on one server
 * never interleave, whichever deployment they come from). Runs the steps as a one-server run does;
 * the run's end gives the turn back, and a turn the queue gave is signalled back to it too.
 */
export async function deploymentTargetWorkflow(target: TargetRunInput): Promise<RunResult> {
  // Targets started before turns were kept in the database wait for the queue's, always.
  const turnsInDatabase = patched(TURNS_IN_DATABASE);
  let turn = false;
  // Begun with its turn (taken without the queue): the steps to run.
  let begun: RunStepDefinition[] | null | undefined;
  setHandler(turnSignal, () => {
    turn = true;
  });
  const giveBack = () =>
    CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(serverRunQueueWorkflowId(target.serverId))
        .signal<[string]>(RELEASED_SIGNAL, target.runId)
        // The queue is gone (terminated): it reads the target's status when it comes back.
        .catch(() => undefined),
    );
  try {
    const place = { runId: target.runId, serverId: target.serverId, organizationId: target.organizationId };
    const queued = await CancellationScope.nonCancellable(() => (turnsInDatabase ? bookkeeping.takeTargetTurn(place) : bookkeeping.queueTarget(place)));
    if ('failed' in queued) {
      setCurrentDetails(`not run: ${queued.failed}`);
      throw failureOf('DeploymentRunFailed', queued.failed);
    }
    if ('turn' in queued) begun = queued.steps;
    else {
      setCurrentDetails(`waiting for its turn on ${target.serverTitle}`);
      await condition(() => turn);
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled before its turn: it never runs (the queue skips a target that is no longer queued).
    await CancellationScope.nonCancellable(() => bookkeeping.cancelQueuedRun({ runId: target.runId }));
    if (turn) await giveBack();
    throw error;
  }
  try {
    return await executeRun(target, begun);
  } finally {
    // The queue that gave a turn waits for it back; a turn taken without it was given back by the run's end.
    if (turn) await giveBack();
  }
}
