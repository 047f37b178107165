import { DeploymentRunModel } from '../../domain/deployments/model';
import { maskedParameters } from '../../domain/deployments/parameters';
import type { PipelineRun, PipelineRunStage } from '../../domain/pipelines/model';

/* A pipeline run as the API shows it: its stages in their order, each with its deployment run's own status beside its own. */

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);
const actorView = (actor: { type: string; id: { toString(): string }; name: string; token_id?: { toString(): string } | null } | null | undefined) =>
  actor ? { type: actor.type, id: actor.id.toString(), name: actor.name, token_id: actor.token_id ? actor.token_id.toString() : null } : null;

/** A stage's gate as it stands: how many approvals it needs, who gave them, when it expires, how it was decided. */
function approvalView(stage: PipelineRunStage) {
  const gate = stage.gate_state;
  if (!gate) return null;
  return {
    approvals_required: gate.approvals_required,
    approvals: gate.approvals.map((a) => ({ by: actorView(a.by), at: iso(a.at), comment: a.comment ?? null })),
    opened_at: iso(gate.opened_at),
    expires_at: iso(gate.expires_at),
    outcome: gate.outcome ?? null,
    decided_at: iso(gate.decided_at),
    rejected_by: actorView(gate.rejected_by),
    reason: gate.reason ?? null,
  };
}

function stageView(stage: PipelineRunStage, runStatuses: ReadonlyMap<string, string>) {
  const runId = stage.deployment_run_id?.toString() ?? null;
  return {
    name: stage.name,
    status: stage.status,
    deployment_id: stage.deployment_id.toString(),
    deployment_name: stage.deployment_name,
    deployment_run_id: runId,
    // The deployment run's own status (queued for its server's turn, frozen, awaiting its own gate…).
    deployment_run_status: runId ? (runStatuses.get(runId) ?? null) : null,
    needs: stage.needs,
    when: stage.when,
    gate: stage.gate ? { approvals: stage.gate.approvals, expires_in: stage.gate.expires_in } : null,
    approval: approvalView(stage),
    parameters: Object.fromEntries(stage.parameters.map((p) => [p.name, p.value])),
    outputs: (stage.outputs as Record<string, string> | null) ?? {},
    output_conflicts: (stage.output_conflicts as Record<string, string> | null) ?? {},
    error: stage.error ?? null,
    kept_from: stage.kept_from?.toString() ?? null,
    started_at: iso(stage.started_at),
    completed_at: iso(stage.completed_at),
  };
}

export function pipelineRunView(run: PipelineRun, runStatuses: ReadonlyMap<string, string> = new Map()) {
  return {
    id: run._id.toString(),
    pipeline_id: run.pipeline_id.toString(),
    pipeline_name: run.pipeline_name,
    status: run.status,
    parameters: maskedParameters(run.parameters),
    triggered_by: run.triggered_by,
    actor: actorView(run.actor),
    retry_of: run.retry_of?.toString() ?? null,
    plan_hash: run.plan_hash ?? null,
    schedule: run.schedule ? { id: run.schedule.id.toString(), name: run.schedule.name, scheduled_at: iso(run.schedule.scheduled_at) } : null,
    created_at: iso(run.createdAt),
    started_at: iso(run.started_at),
    completed_at: iso(run.completed_at),
    cancel_requested_at: iso(run.cancel_requested_at),
    cancelled_by: actorView(run.cancelled_by),
    error: run.error ?? null,
    seq: run.seq,
    stages: run.stages.map((stage) => stageView(stage, runStatuses)),
  };
}

export type PipelineRunView = ReturnType<typeof pipelineRunView>;

/** The runs' views, their stages' deployment runs' statuses read in one query. */
export async function pipelineRunViews(runs: PipelineRun[]): Promise<PipelineRunView[]> {
  const ids = runs.flatMap((run) => run.stages.flatMap((stage) => (stage.deployment_run_id ? [stage.deployment_run_id] : [])));
  const statuses = new Map((ids.length ? await DeploymentRunModel.find({ _id: { $in: ids } }, { status: 1 }).lean() : []).map((r) => [r._id.toString(), r.status]));
  return runs.map((run) => pipelineRunView(run, statuses));
}
