/* What the pipeline run's workflow, its activities and the API share: ids, inputs, the stage gate's update. */
import type { FleetRunInput, QueuedRun } from './runs';

export const pipelineRunWorkflowId = (runId: string) => `pipeline-run-${runId}`;

/** A person's decision at a stage's gate, sent by the API (which checked who may decide) to the pipeline run's workflow. */
export const STAGE_GATE_UPDATE = 'decideStageGate';

export interface PipelineRunInput {
  runId: string;
  organizationId: string;
  pipelineId: string;
  pipelineName: string;
  triggeredBy: string;
}

/** A stage as the workflow schedules it: its place in the graph and what is known of it at the start (a retry keeps succeeded stages). */
export interface StageOfRun {
  name: string;
  needs: string[];
  when: 'success' | 'failure' | 'always';
  gate: { approvals: number; expires_in: string; expires_ms: number } | null;
  /** Final already (kept by a retry): success. */
  status: string;
}

export interface StageGateDecision {
  stage: string;
  /** A person's approval or a rejection; the API checked the approval rules. */
  decision: 'approve' | 'reject';
  /** Unique per request: recorded once whatever the workflow does again. */
  id: string;
  by: { type: 'person' | 'service_account'; id: string; name: string; token_id: string | null; session_id?: string | null };
  comment: string | null;
}

export interface StageGateDecisionResult {
  /** The gate's outcome after this decision: still open (more approvals needed), approved or rejected. */
  outcome: 'open' | 'approved' | 'rejected';
  approvals: number;
  required: number;
}

/** The child a stage's run is: a one-server run's workflow (it takes its server's turn itself) or a fleet run's. */
export type StageChild = { kind: 'one'; input: QueuedRun } | { kind: 'fleet'; input: FleetRunInput; targets: number };

/** A stage started: its deployment run and the child to run it; or why it could not start (it fails). */
export type StageStart = { runId: string; child: StageChild } | { failed: string };

/** How a stage ended, as the pipeline's workflow and its dependants read it. */
export interface StageEnd {
  status: 'success' | 'failed' | 'cancelled' | 'skipped';
  error: string | null;
}

/**
 * The trigger path every client uses, for a stage's run (src/api/pipelines/stage-runs.ts), given to
 * the worker's activities when Bosun is composed: the run stored and queued as the pipeline run's
 * actor, not started (the pipeline's workflow starts it as its child).
 */
export interface StageRunStarter {
  create(input: { pipelineRunId: string; stage: string }): Promise<StageStart>;
}
