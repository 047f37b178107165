import { triggeredByText, type TriggeredBy } from '../access/actor';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { fleetWorkflowMetadata, runWorkflowMetadata, type FleetRunInput, type GateDecision, type GateDecisionResult, type PauseRequest, type PauseResult, type QueuedRun, type RollbackRunInput } from '../contracts/runs';
import { fleetSearchAttributes, runSearchAttributes } from '../contracts/search-attributes';
import type { WorkflowSignatures } from '../contracts/signatures';
import { deploymentRollbackWorkflowId, deploymentRunWorkflowId, FREEZES_CHANGED_SIGNAL, GATE_DECISION_UPDATE, PAUSE_UPDATE, RESUME_UPDATE } from '../contracts/workflow-ids';
import { answeredUpdate, cancelIfRunning, isOpen } from './handles';
import type { Reachability } from './reachability';

/** What a run's workflow needs of its run document to start: a one-server run's, placed in its server's queue. */
export interface StartableRun extends TriggeredBy {
  _id: { toString(): string };
  organization_id: { toString(): string };
  deployment_id: { toString(): string };
  server_id?: { toString(): string } | null;
  server_title?: string | null;
  queue_seq?: number | null;
}

/** A one-server run's workflow input, from its document (placed by its trigger) and its deployment's name. */
export const runStart = (run: StartableRun, deploymentName: string): QueuedRun => ({
  runId: run._id.toString(),
  organizationId: run.organization_id.toString(),
  deploymentId: run.deployment_id.toString(),
  serverId: String(run.server_id),
  deploymentName,
  triggeredBy: triggeredByText(run),
  serverTitle: run.server_title ?? String(run.server_id),
  place: run.queue_seq!,
});

/** Runs' workflows: one per run (`deployment-run-<run id>`), started once, never again once finished. */
export class RunWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly reachability: Reachability,
  ) {}

  /**
   * Starts a one-server run's workflow, which takes its server's turn or waits for it, or finds it
   * started: the trigger, a repeated trigger and the workers' sweep may all ask.
   */
  start(run: QueuedRun): Promise<void> {
    return this.startOnce(
      this.client.workflow.start<WorkflowSignatures['deploymentRunWorkflow']>('deploymentRunWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: deploymentRunWorkflowId(run.runId),
        args: [run],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: runSearchAttributes(run),
        memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
        ...runWorkflowMetadata(run),
      }),
    );
  }

  /** Starts a fleet run's workflow, or finds it started: the trigger, and the workers' sweep after a start that was lost, may both ask. */
  startFleet(run: FleetRunInput, targets: number): Promise<void> {
    return this.startOnce(
      this.client.workflow.start<WorkflowSignatures['deploymentFleetWorkflow']>('deploymentFleetWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: deploymentRunWorkflowId(run.runId),
        args: [run],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: fleetSearchAttributes(run),
        memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
        ...fleetWorkflowMetadata(run, targets),
      }),
    );
  }

  /**
   * Starts the rollback a person asked for of a finished fleet run (`deployment-rollback-<run id>`):
   * false when one was started before (a rollback runs once).
   */
  async startRollback(input: RollbackRunInput, deploymentName: string): Promise<boolean> {
    try {
      await this.client.workflow.start<WorkflowSignatures['deploymentRollbackWorkflow']>('deploymentRollbackWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: deploymentRollbackWorkflowId(input.runId),
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: `${deploymentName}: rollback of run ${input.runId}`,
        staticDetails: `**Run** ${input.runId}\n\n**Asked by** ${input.requestedBy?.name ?? 'unknown'}\n\n**Reason** ${input.reason}`,
      });
      this.reachability.sent(true);
      return true;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      this.reachability.sent(false);
      throw error;
    }
  }

  /** Is the run's workflow still open? False when it ended (or never existed). */
  isOpen(runId: string): Promise<boolean> {
    return isOpen(this.client, deploymentRunWorkflowId(runId));
  }

  /** Cancels a run's workflow; false when it has ended (terminated by hand, say) or does not exist (not started, or long gone). */
  cancel(runId: string): Promise<boolean> {
    return cancelIfRunning(this.client, deploymentRunWorkflowId(runId));
  }

  /** A person's approval or rejection, to the fleet run's workflow (which has its store record it). */
  decideGate(runId: string, decision: GateDecision) {
    return this.update<GateDecisionResult>(runId, GATE_DECISION_UPDATE, decision);
  }

  /** Pause after the running batch, or resume, to the fleet run's workflow. */
  pause(runId: string, request: PauseRequest) {
    return this.update<PauseResult>(runId, PAUSE_UPDATE, request);
  }

  resume(runId: string, request: PauseRequest) {
    return this.update<PauseResult>(runId, RESUME_UPDATE, request);
  }

  /** Tells a frozen fleet run to check its freezes again now (one edited or deleted); nothing when its workflow has ended. */
  async freezesChanged(runId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(deploymentRunWorkflowId(runId)).signal(FREEZES_CHANGED_SIGNAL);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }

  /** An update of a run's workflow, answered by it, or why not (answeredUpdate). */
  private update<T>(runId: string, name: string, arg: unknown, timeoutMs = 20_000) {
    return answeredUpdate<T>(this.client, deploymentRunWorkflowId(runId), name, arg, timeoutMs);
  }

  /** A start that found its workflow started, or finished (never started twice), went through too. */
  private async startOnce(start: Promise<unknown>): Promise<void> {
    try {
      await start;
      this.reachability.sent(true);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return this.reachability.sent(true);
      this.reachability.sent(false);
      throw error;
    }
  }
}
