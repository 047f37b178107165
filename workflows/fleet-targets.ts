import { executeChild, ParentClosePolicy } from '@temporalio/workflow';
import type { FleetRunInput, FleetTarget, HealthCheck, RunResult } from '../src/domain/contracts/runs';
import { targetRunInput, type TargetOutcome } from '../src/domain/contracts/target-groups';
import { runSearchAttributes } from '../src/domain/contracts/search-attributes';
import { fleetTargetWorkflowId } from '../src/domain/contracts/workflow-ids';
import { deploymentTargetWorkflow } from './deployment-target';
import { targetFailureLine } from './failures';
import { runBatchInGroups } from './fleet-groups';
import { targetHealthCheck } from './health-checks';
import { isPatched, PATCHES } from './patches';

/**
 * A batch's targets, run: in groups of targets sharing a workflow (fleet-groups.ts), or — as fleet
 * runs started before them replay — each in a workflow of its own. How each ended, in the batch's
 * order; `healthCheck`: checked on each as soon as its steps succeed.
 */
export async function runBatch(run: FleetRunInput, targets: FleetTarget[], batch: number, healthCheck: HealthCheck | null): Promise<TargetOutcome[]> {
  if (isPatched(PATCHES.targetGroups)) return runBatchInGroups(run, targets, batch, healthCheck);
  const check = healthCheck ? targetHealthCheck(healthCheck) : null;
  const unhealthy: (string | null)[] = targets.map(() => null);
  const results = await Promise.allSettled(
    targets.map(async (target, index) => {
      const result = await runTarget(run, target, batch);
      if (check) unhealthy[index] = await check(target);
      return result;
    }),
  );
  return results.map((result, index) => ({ failed: result.status === 'fulfilled' ? null : targetFailureLine(targets[index]!, result.reason), unhealthy: unhealthy[index]! }));
}

/** One target of a fleet run, as its child workflow (a rolling window's, and batches before target groups); `where` names its batch (or window group) in the Temporal UI. */
export function runTarget(run: FleetRunInput, target: FleetTarget, batch: number, where = `batch ${batch}`): Promise<RunResult> {
  const input = targetRunInput(run, target, batch);
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
