import { Context } from '@temporalio/activity';
import { Types } from 'mongoose';
import type { StageEnd, StageGateDecision, StageGateDecisionResult, StageOfRun, StageRunStarter, StageStart } from '../src/domain/contracts/pipelines';
import { FINAL_RUN_STATUSES, DeploymentRunModel, type RunStatus } from '../src/domain/deployments/model';
import { runOutputs } from '../src/domain/deployments/outputs';
import { closeRun } from '../src/domain/deployments/runs';
import * as pipelineRuns from '../src/domain/pipelines/runs';
import { PipelineRunModel } from '../src/domain/pipelines/model';

export interface PipelineActivityDeps {
  /** Absent in a worker composed without the API's trigger path (then a stage cannot start). */
  stageRuns?: StageRunStarter;
}

/** How often a stage whose run's workflow another started is checked on. */
const STAGE_RUN_POLL_MS = 2000;

/** How a stage's deployment run ended, as the stage records it (a run that never began: cancelled with it). */
async function stageEndOf(deploymentRunId: Types.ObjectId): Promise<{ status: 'success' | 'failed' | 'cancelled'; error: string | null; outputs: Record<string, string>; conflicts: Record<string, string> }> {
  let run = await DeploymentRunModel.findById(deploymentRunId, { status: 1, error: 1 }).lean();
  // Its child was never started (the pipeline run was cancelled just before): it never runs.
  if (run?.status === 'queued') {
    await closeRun(deploymentRunId, 'queued', 'cancelled');
    run = await DeploymentRunModel.findById(deploymentRunId, { status: 1, error: 1 }).lean();
  }
  if (!run) return { status: 'failed', error: 'its deployment run was deleted', outputs: {}, conflicts: {} };
  if (!FINAL_RUN_STATUSES.includes(run.status as RunStatus)) {
    // Its workflow ended without finishing it (terminated by hand): nothing will.
    await closeRun(deploymentRunId, 'begun', 'failed', { error: 'The run’s workflow ended without finishing it (terminated in Temporal?)' });
    return stageEndOf(deploymentRunId);
  }
  const { values, conflicts } = await runOutputs(deploymentRunId.toString());
  if (run.status === 'success') return { status: 'success', error: null, outputs: values, conflicts };
  if (run.status === 'cancelled') return { status: 'cancelled', error: 'its deployment run was cancelled', outputs: values, conflicts };
  return { status: 'failed', error: run.error ?? 'its deployment run failed', outputs: values, conflicts };
}

/** A pipeline run's stages, one deployment run each: begun, gated, started, ended, and the run finished. */
export function createPipelineActivities({ stageRuns }: PipelineActivityDeps) {
  return {
    beginPipelineRun: ({ runId }: { runId: string }): Promise<StageOfRun[] | null> => pipelineRuns.beginPipelineRun(runId),

    skipPipelineStage: ({ runId, stage, reason }: { runId: string; stage: string; reason: string }) => pipelineRuns.skipStage(runId, stage, reason),

    /** Opens a stage's gate; when it expires (ms since the epoch). */
    async openPipelineStageGate({ runId, stage, gate }: { runId: string; stage: string; gate: { approvals: number; expires_in: string } }): Promise<number> {
      return (await pipelineRuns.openStageGate(runId, stage, gate)).getTime();
    },

    /** A person's decision at a stage's gate (the API checked who may decide), recorded once; the gate's outcome after it. */
    async decidePipelineStage({ runId, decision, required }: { runId: string; decision: StageGateDecision; required: number }): Promise<StageGateDecisionResult> {
      if (decision.decision === 'reject') {
        await pipelineRuns.decideStageGate(runId, decision.stage, 'rejected', { by: decision.by, reason: decision.comment, id: decision.id });
        return { outcome: 'rejected', approvals: 0, required };
      }
      const approvals = await pipelineRuns.recordStageApproval(runId, decision.stage, { by: decision.by, comment: decision.comment, decision_id: decision.id });
      if (approvals < required) return { outcome: 'open', approvals, required };
      await pipelineRuns.decideStageGate(runId, decision.stage, 'approved');
      return { outcome: 'approved', approvals, required };
    },

    expirePipelineStageGate: ({ runId, stage }: { runId: string; stage: string }) => pipelineRuns.decideStageGate(runId, stage, 'expired'),

    /** The stage's deployment run stored (as the pipeline run's actor), for its workflow to start as its child; or why it cannot (the stage fails). */
    async startPipelineStage({ runId, stage }: { runId: string; stage: string }): Promise<StageStart> {
      if (!stageRuns) throw new Error('This worker was composed without the trigger path pipeline stages need');
      const started = await stageRuns.create({ pipelineRunId: runId, stage });
      if ('failed' in started) await pipelineRuns.stageEnded(runId, stage, { status: 'failed', error: started.failed });
      else await pipelineRuns.stageStarted(runId, stage, started.runId);
      return started;
    },

    /** The stage's run ended (its child workflow did): the stage records how, and its outputs. */
    async endPipelineStage({ runId, stage }: { runId: string; stage: string }): Promise<StageEnd> {
      const run = await PipelineRunModel.findById(runId, { stages: 1 }).lean();
      const deploymentRunId = run?.stages.find((s) => s.name === stage)?.deployment_run_id;
      if (!deploymentRunId) {
        await pipelineRuns.stageEnded(runId, stage, { status: 'cancelled', error: 'cancelled before its run began' });
        return { status: 'cancelled', error: 'cancelled before its run began' };
      }
      const end = await stageEndOf(deploymentRunId);
      await pipelineRuns.stageEnded(runId, stage, end);
      return { status: end.status, error: end.error };
    },

    /** Waits (heartbeating) for a stage's run whose workflow was started by its server's queue instead of the pipeline's: a rare race at its start. */
    async awaitPipelineStageRun({ deploymentRunId }: { deploymentRunId: string }): Promise<void> {
      for (;;) {
        const run = await DeploymentRunModel.findById(deploymentRunId, { status: 1 }).lean();
        if (!run || FINAL_RUN_STATUSES.includes(run.status as RunStatus)) return;
        Context.current().heartbeat();
        await Context.current().sleep(STAGE_RUN_POLL_MS);
      }
    },

    finishPipelineRun: ({ runId, cancelled }: { runId: string; cancelled: boolean }) => pipelineRuns.finishPipelineRun(runId, cancelled),
  };
}

export type PipelineActivities = ReturnType<typeof createPipelineActivities>;
