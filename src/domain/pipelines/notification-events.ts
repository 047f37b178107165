import type { ClientSession, Types } from 'mongoose';
import { actorView } from '../access/actor';
import { recordNotificationEvent } from '../notifications/event-outbox';
import { PipelineRunModel, type PipelineRun } from './model';

/*
 * A pipeline run's notification events, as its store transitions record them (in their
 * transaction): the run's end (succeeded or failed) and a stage's gate opening. A pipeline run spans
 * several deployments, so its events name none: a channel's deployments filter does not narrow them.
 */

export type PipelineEventType = 'pipeline.succeeded' | 'pipeline.failed' | 'pipeline.awaiting_approval';

/** The pipeline run's console page, relative to the console's address (the sender prefixes PUBLIC_URL). */
export const pipelineRunConsolePath = (pipelineId: string, runId: string) => `/pipelines/${pipelineId}/runs/${runId}`;

function summaryOf(type: PipelineEventType, run: PipelineRun, stage: PipelineRun['stages'][number] | undefined): string {
  const name = `Pipeline run of ${run.pipeline_name}`;
  if (type === 'pipeline.succeeded') return `${name} succeeded`;
  if (type === 'pipeline.failed') return `${name} failed${run.error ? `: ${run.error}` : ''}`;
  const required = stage?.gate_state?.approvals_required ?? 1;
  return `${name} is waiting for approval at stage ${stage?.name ?? '?'} (${required} approval${required === 1 ? '' : 's'} needed)`;
}

/**
 * Records `type` for pipeline run `runId`, read in `session` as the change left it; `stage` names
 * the stage whose gate opened (pipeline.awaiting_approval).
 */
export async function recordPipelineRunEvent(runId: string | Types.ObjectId, type: PipelineEventType, { session, stage: stageName }: { session: ClientSession; stage?: string }): Promise<void> {
  const run = await PipelineRunModel.findById(runId).session(session).lean<PipelineRun>();
  if (!run) return;
  const id = run._id.toString();
  const pipelineId = run.pipeline_id.toString();
  const stage = stageName ? run.stages.find((s) => s.name === stageName) : undefined;
  const failed = type === 'pipeline.failed' ? run.stages.find((s) => s.status === 'failed') : undefined;
  await recordNotificationEvent(
    {
      organizationId: run.organization_id,
      type,
      subject: { kind: 'pipeline_run', id },
      payload: {
        summary: summaryOf(type, run, stage),
        pipeline: { id: pipelineId, name: run.pipeline_name },
        run: {
          id,
          status: run.status,
          error: run.error ?? null,
          actor: actorView(run.actor),
          triggered_by: run.triggered_by,
          started_at: run.started_at?.toISOString() ?? null,
          completed_at: run.completed_at?.toISOString() ?? null,
          retry_of: run.retry_of?.toString() ?? null,
          schedule: run.schedule ? { id: run.schedule.id.toString(), name: run.schedule.name } : null,
          ...(failed ? { failed_stage: { name: failed.name, error: failed.error ?? null, deployment_name: failed.deployment_name, deployment_run_id: failed.deployment_run_id?.toString() ?? null } } : {}),
        },
        ...(stage?.gate_state
          ? { stage: { name: stage.name, deployment_name: stage.deployment_name, approvals_required: stage.gate_state.approvals_required, expires_at: stage.gate_state.expires_at.toISOString() } }
          : {}),
        console_path: pipelineRunConsolePath(pipelineId, id),
      },
    },
    { session },
  );
}
