import { ChildWorkflowFailure, executeChild, isCancellation, ParentClosePolicy } from '@temporalio/workflow';
import type { FleetRunInput, FleetTarget, RunResult, TargetRunInput } from '../src/domain/contracts/runs';
import { runSearchAttributes } from '../src/domain/contracts/search-attributes';
import { fleetTargetWorkflowId } from '../src/domain/contracts/workflow-ids';
import { deploymentTargetWorkflow } from './deployment-target';
import { firstLine } from './failures';

/** Why a target failed, in one line: the failure of its workflow (the first failed step, its server and why). */
export function targetFailureLine(target: FleetTarget, error: unknown): string {
  const cause = error instanceof ChildWorkflowFailure && error.cause ? error.cause : error;
  if (isCancellation(cause)) return `${target.serverTitle}: cancelled`;
  return firstLine(cause instanceof Error ? cause.message : String(cause));
}

/** One target of a fleet run, as its child workflow; `where` names its batch (or window group) in the Temporal UI. */
export function runTarget(run: FleetRunInput, target: FleetTarget, batch: number, where = `batch ${batch}`): Promise<RunResult> {
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
    staticSummary: `${run.deploymentName} on ${target.serverTitle} (${where})`,
    staticDetails: `**Server** ${target.serverTitle} (${target.serverId})\n\n**Fleet run** ${run.runId}\n\n**Target run** ${target.runId}`,
    // The fleet run terminated by hand: its targets are cancelled cleanly, their commands killed.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
}
