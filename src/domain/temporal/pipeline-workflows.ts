import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { pipelineRunWorkflowId, STAGE_GATE_UPDATE, type PipelineRunInput, type StageGateDecision, type StageGateDecisionResult } from '../contracts/pipelines';
import type { WorkflowSignatures } from '../contracts/signatures';
import { answeredUpdate, cancelIfRunning } from './handles';
import type { Reachability } from './reachability';

/** Pipeline runs' workflows: one per run (`pipeline-run-<run id>`), started once, never again once finished. */
export class PipelineWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly reachability: Reachability,
  ) {}

  /** Starts a pipeline run's workflow, or finds it started (a repeated trigger, the workers' sweep). */
  async start(run: PipelineRunInput, stages: number): Promise<void> {
    try {
      await this.client.workflow.start<WorkflowSignatures['pipelineRunWorkflow']>('pipelineRunWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: pipelineRunWorkflowId(run.runId),
        args: [run],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        memo: { pipeline: run.pipelineName, triggered_by: run.triggeredBy },
        staticSummary: `${run.pipelineName}: ${stages} stages`,
        staticDetails: [`**Pipeline** ${run.pipelineName} (${run.pipelineId})`, `**Triggered by** ${run.triggeredBy}`, `**Pipeline run** ${run.runId}`].join('\n\n'),
      });
      this.reachability.sent(true);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return this.reachability.sent(true);
      this.reachability.sent(false);
      throw error;
    }
  }

  /** Cancels a pipeline run's workflow; false when it has ended or never existed. */
  cancel(runId: string): Promise<boolean> {
    return cancelIfRunning(this.client, pipelineRunWorkflowId(runId));
  }

  /**
   * A person's decision at a stage's gate, answered by the workflow: its result; 'refused' (no such
   * gate is open now), 'gone' (the workflow no longer runs) or 'unanswered' (no worker took it in time).
   */
  decideStage(runId: string, decision: StageGateDecision, timeoutMs = 20_000) {
    return answeredUpdate<StageGateDecisionResult>(this.client, pipelineRunWorkflowId(runId), STAGE_GATE_UPDATE, decision, timeoutMs);
  }
}
