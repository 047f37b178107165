import {
  allHandlersFinished,
  CancellationScope,
  CancelledFailure,
  condition,
  defineUpdate,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { PipelineActivities } from '../activities/pipelines';
import { failure } from '../src/domain/contracts/failure-types';
import { STAGE_GATE_UPDATE, type PipelineRunInput, type StageChild, type StageGateDecision, type StageGateDecisionResult, type StageOfRun } from '../src/domain/contracts/pipelines';
import { fleetWorkflowMetadata, runWorkflowMetadata } from '../src/domain/contracts/runs';
import { fleetSearchAttributes, runSearchAttributes } from '../src/domain/contracts/search-attributes';
import { deploymentRunWorkflowId } from '../src/domain/contracts/workflow-ids';
import { nextMoves, type Standing } from '../src/domain/contracts/pipeline-graph';
import { deploymentFleetWorkflow } from './deployment-fleet';
import { deploymentRunWorkflow } from './deployment-run';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';
import { outcome } from './run-activities';

// Short database work (and a stage's trigger): local activities, run by the worker that runs the workflow, with no task round trip.
const pipelines = proxyLocalActivities<PipelineActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  localRetryThreshold: '100 milliseconds',
});
const following = proxyActivities<PipelineActivities>({ startToCloseTimeout: '30 days', heartbeatTimeout: HEARTBEAT_TIMEOUT_MS, retry: { maximumInterval: '30 seconds' } });

export const stageGateUpdate = defineUpdate<StageGateDecisionResult, [StageGateDecision]>(STAGE_GATE_UPDATE);

type GateOutcome = 'open' | 'approved' | 'rejected' | 'expired';
const ended = (status: 'success' | 'failed' | 'cancelled' | 'skipped'): Standing => ({ state: 'ended', status, failedUpstream: false });
const nonCancellable = <T>(fn: () => Promise<T>) => CancellationScope.nonCancellable(fn);

/**
 * A pipeline run (`pipeline-run-<id>`): its stages as a graph, each stage one run of a deployment
 * started as this workflow's child (its queue, gates, freezes, health checks and rollback its own).
 * A stage starts once every stage it needs has ended and its `when` says so (src/domain/pipelines/
 * graph.ts); stages whose needs are met run at the same time. A stage's gate waits for people
 * (`decideStageGate`) until it expires. Cancelling the workflow cancels the stages' runs and skips
 * what has not begun, but `always` stages still run. Its outcome is the pipeline run's: Completed,
 * Failed naming the first failed stage, or Cancelled.
 */
export async function pipelineRunWorkflow(input: PipelineRunInput): Promise<{ status: 'success'; stages: number }> {
  const { runId } = input;
  const stages = await nonCancellable(() => pipelines.beginPipelineRun({ runId }));
  if (!stages) return endedBeforeItBegan(runId);
  const byName = new Map(stages.map((stage) => [stage.name, stage]));
  // A retry's stages that succeeded before are ended already: never run twice.
  const standings = new Map<string, Standing>(stages.map((stage) => [stage.name, stage.status === 'success' ? ended('success') : { state: 'waiting' }]));
  let cancelled = false;
  CancellationScope.current().cancelRequested.catch(() => {
    cancelled = true;
  });
  const gates = new Map<string, { required: number; outcome: GateOutcome }>();
  setHandler(
    stageGateUpdate,
    async (decision) => {
      // The store opened the gate (the API saw it open) before this workflow heard so, as after a worker died: wait for it here.
      await condition(() => gates.has(decision.stage) || standings.get(decision.stage)?.state === 'ended');
      const gate = gates.get(decision.stage) ?? { required: 0, outcome: 'rejected' as GateOutcome };
      const refused = { outcome: gate.outcome === 'approved' ? 'approved' : 'rejected', approvals: 0, required: gate.required } as const;
      if (gate.outcome !== 'open') return refused;
      const result = await nonCancellable(() => pipelines.decidePipelineStage({ runId, decision, required: gate.required }));
      if (gate.outcome !== 'open') return { ...result, outcome: refused.outcome };
      gate.outcome = result.outcome;
      return result;
    },
    {
      validator: (decision) => {
        const stage = byName.get(decision.stage);
        const gate = gates.get(decision.stage);
        if (!stage?.gate || (gate && gate.outcome !== 'open') || standings.get(decision.stage)?.state === 'ended') throw new Error(`Stage "${decision.stage}" is not waiting for approval`);
      },
    },
  );

  /** A stage's gate: open until enough people approve, one rejects, or it expires. */
  async function passGate(stage: StageOfRun): Promise<GateOutcome> {
    const gate = stage.gate!;
    const expiresAt = await nonCancellable(() => pipelines.openPipelineStageGate({ runId, stage: stage.name, gate: { approvals: gate.approvals, expires_in: gate.expires_in } }));
    const state = { required: gate.approvals, outcome: 'open' as GateOutcome };
    gates.set(stage.name, state);
    if (await condition(() => state.outcome !== 'open', Math.max(1, expiresAt - Date.now()))) return state.outcome;
    state.outcome = 'expired';
    await nonCancellable(() => pipelines.expirePipelineStageGate({ runId, stage: stage.name }));
    return 'expired';
  }

  async function runStage(stage: StageOfRun): Promise<Standing> {
    const body = async (): Promise<Standing> => {
      if (stage.gate && (await passGate(stage)) !== 'approved') return ended('failed');
      const started = await nonCancellable(() => pipelines.startPipelineStage({ runId, stage: stage.name }));
      if ('failed' in started) return ended('failed');
      await runChild(started.runId, started.child);
      return ended((await nonCancellable(() => pipelines.endPipelineStage({ runId, stage: stage.name }))).status);
    };
    try {
      // An `always` stage begun after a cancel runs to its end.
      return await (cancelled ? nonCancellable(body) : body());
    } catch (error) {
      if (!isCancellation(error)) throw error;
      return ended((await nonCancellable(() => pipelines.endPipelineStage({ runId, stage: stage.name }))).status);
    }
  }

  const underway = new Map<string, Promise<void>>();
  for (;;) {
    const moves = nextMoves(stages, standings, cancelled || CancellationScope.current().consideredCancelled);
    for (const move of moves) {
      if (!move.run) {
        standings.set(move.stage, { state: 'ended', status: 'skipped', failedUpstream: move.failedUpstream });
        await nonCancellable(() => pipelines.skipPipelineStage({ runId, stage: move.stage, reason: move.reason }));
        continue;
      }
      const stage = byName.get(move.stage)!;
      standings.set(stage.name, { state: 'underway' });
      underway.set(
        stage.name,
        runStage(stage).then((standing) => {
          standings.set(stage.name, standing);
          underway.delete(stage.name);
        }),
      );
    }
    describe(standings, gates);
    if (moves.length) continue;
    if (!underway.size) break;
    await Promise.race(underway.values());
  }

  const end = await nonCancellable(() => pipelines.finishPipelineRun({ runId, cancelled: cancelled || CancellationScope.current().consideredCancelled }));
  await condition(allHandlersFinished);
  setCurrentDetails(end.status === 'success' ? `succeeded: ${stages.length} stages` : `${end.status}${end.error ? `: ${end.error}` : ''}`);
  if (end.status === 'cancelled') throw new CancelledFailure('The pipeline run was cancelled');
  if (end.status === 'failed') throw failure('PipelineRunFailed', end.error ?? 'A stage failed');
  return { status: 'success', stages: stages.length };
}

/**
 * A stage's deployment run, as this workflow's child (`deployment-run-<id>`). Its failure or cancel
 * is an ordinary end its run records; a run whose workflow its server's queue started first (a race
 * at its start) is waited for instead.
 */
async function runChild(deploymentRunId: string, child: StageChild): Promise<void> {
  const common = { workflowId: deploymentRunWorkflowId(deploymentRunId), workflowIdReusePolicy: 'REJECT_DUPLICATE' as const, parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL };
  try {
    if (child.kind === 'one') {
      await executeChild(deploymentRunWorkflow, { ...common, args: [child.input], typedSearchAttributes: runSearchAttributes(child.input), memo: { deployment: child.input.deploymentName, triggered_by: child.input.triggeredBy }, ...runWorkflowMetadata(child.input) });
    } else {
      await executeChild(deploymentFleetWorkflow, { ...common, args: [child.input], typedSearchAttributes: fleetSearchAttributes(child.input), memo: { deployment: child.input.deploymentName, triggered_by: child.input.triggeredBy }, ...fleetWorkflowMetadata(child.input, child.targets) });
    }
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) await following.awaitPipelineStageRun({ deploymentRunId });
  }
}

/** "What is happening now" in the Temporal UI: the stages running and those waiting for people. */
function describe(standings: ReadonlyMap<string, Standing>, gates: ReadonlyMap<string, { outcome: GateOutcome }>) {
  const underway = [...standings].filter(([, standing]) => standing.state === 'underway').map(([name]) => name);
  const waiting = underway.filter((name) => gates.get(name)?.outcome === 'open');
  const running = underway.filter((name) => !waiting.includes(name));
  const parts = [running.length ? `running: ${running.join(', ')}` : '', waiting.length ? `waiting for approval: ${waiting.join(', ')}` : ''].filter(Boolean);
  if (parts.length) setCurrentDetails(parts.join('; '));
}

/** Its run ended before this workflow began (cancelled while queued): the workflow ends as the run did. */
async function endedBeforeItBegan(runId: string): Promise<never> {
  const end = await pipelines.finishPipelineRun({ runId, cancelled: false });
  if (end.status === 'failed') throw failure('PipelineRunFailed', end.error ?? 'The pipeline run failed before it began');
  if (!CancellationScope.current().consideredCancelled) {
    await outcome.cancelOwnWorkflow();
    await CancellationScope.current().cancelRequested;
  }
  throw new CancelledFailure('Cancelled while queued');
}
