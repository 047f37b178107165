import { pipelineRunWorkflowId } from '../domain/contracts/pipelines';
import { PipelineRunModel, type PipelineRun } from '../domain/pipelines/model';
import { finishPipelineRun } from '../domain/pipelines/runs';
import type { WorkflowGateway } from '../domain/temporal/client';

/*
 * Pipeline runs a crash or a reset Temporal left behind: one still queued whose trigger died before
 * it started its workflow is started (one started already is found started); one under way whose
 * workflow has ended (terminated by hand) is finished, as failed: nothing will ever run it again.
 */

/** Starts the workflow of every pipeline run still queued (with `stalledForMs`, only those queued that long). */
export async function startQueuedPipelineRuns(workflows: WorkflowGateway, { stalledForMs }: { stalledForMs?: number } = {}): Promise<number> {
  const match: Record<string, unknown> = { status: 'queued', ...(stalledForMs === undefined ? {} : { createdAt: { $lt: new Date(Date.now() - stalledForMs) } }) };
  let count = 0;
  for await (const run of PipelineRunModel.find(match, { parameters: 0 }).lean<PipelineRun>().cursor()) {
    await workflows.pipelines.start(
      { runId: run._id.toString(), organizationId: run.organization_id.toString(), pipelineId: run.pipeline_id.toString(), pipelineName: run.pipeline_name, triggeredBy: run.triggered_by },
      run.stages.length,
    );
    count += 1;
  }
  return count;
}

/** Finishes every pipeline run under way whose workflow has ended without finishing it. */
export async function failOrphanedPipelineRuns(workflows: WorkflowGateway): Promise<number> {
  let count = 0;
  for await (const run of PipelineRunModel.find({ status: { $in: ['running', 'awaiting_approval'] } }, { _id: 1 }).lean().cursor()) {
    if (await workflows.workflowOpen(pipelineRunWorkflowId(run._id.toString()))) continue;
    await finishPipelineRun(run._id.toString(), false, 'The pipeline run’s workflow ended without finishing it (terminated in Temporal?)');
    count += 1;
  }
  return count;
}
