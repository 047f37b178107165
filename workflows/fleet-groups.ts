import { CancellationScope, CancelledFailure, executeChild, ParentClosePolicy, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import type { FleetRunInput, FleetTarget, HealthCheck } from '../src/domain/contracts/runs';
import { TARGET_GROUP_SIZE, targetRunInput, type TargetGroupInput, type TargetOutcome } from '../src/domain/contracts/target-groups';
import { fleetSearchAttributes } from '../src/domain/contracts/search-attributes';
import { fleetTargetGroupWorkflowId } from '../src/domain/contracts/workflow-ids';
import { targetFailureLine } from './failures';
import { targetHealthCheck } from './health-checks';
import { bookkeeping } from './run-activities';
import { runInTurn, turnSignal } from './run-turn';

/*
 * A batch's targets run in groups: each group one workflow, a child of the fleet run's, running its
 * targets side by side (each takes its turn in its server's queue and runs its steps, as a target
 * with a workflow of its own did). A workflow per target cost a 100-target run a third of its time.
 *
 * Why groups and not the whole batch in the fleet run's workflow: a workflow task stays open while
 * any of its local activities runs (a quick step is one), up to 8 s at a time; what reaches the
 * workflow meanwhile — a queue's "your turn", a timer, a long step's end — waits in Temporal's buffer,
 * and past 100 buffered events (history.maximumBufferedEventsBatch) Temporal force-closes the task,
 * its steps' results with it. A target has at most two such events outstanding (a turn signal and
 * a timer), so a group of TARGET_GROUP_SIZE (40) stays under the limit, and the fleet run's own
 * workflow, running no step, answers a pause or a gate's decision at once.
 */

/** A batch's targets in groups of at most TARGET_GROUP_SIZE, as even as can be (100 → 34, 33, 33). */
export function groupsOf<T>(targets: T[]): T[][] {
  const count = Math.ceil(targets.length / TARGET_GROUP_SIZE);
  const groups: T[][] = [];
  for (let i = 0, start = 0; i < count; i += 1) {
    const size = Math.ceil((targets.length - start) / (count - i));
    groups.push(targets.slice(start, start + size));
    start += size;
  }
  return groups;
}

/**
 * A group of a batch's targets, side by side in one workflow: each asks for its server's turn (its
 * place recorded with this workflow's id, which its queue tells "your turn", naming it), runs its
 * steps, and — with a health check without a soak — is checked as soon as they succeed. Completes
 * with how each target ended (a target's failure is an outcome, not the group's); cancelled (its
 * fleet run was), every target is cancelled and so is the group.
 */
export async function fleetTargetGroupWorkflow(group: TargetGroupInput): Promise<TargetOutcome[]> {
  const given = new Set<string>();
  setHandler(turnSignal, (runId) => {
    if (runId) given.add(runId);
  });
  const { workflowId } = workflowInfo();
  const check = group.healthCheck ? targetHealthCheck(group.healthCheck) : null;
  const total = group.targets.length;
  let ended = 0;
  let failed = 0;
  const waiting = new Set<string>();
  const report = () => setCurrentDetails(`batch ${group.batch}: ${total - ended - waiting.size} running, ${waiting.size} waiting for their turn, ${ended} of ${total} ended (${failed} failed)`);
  const shared = {
    given: (runId: string) => given.has(runId),
    waiting: (runId: string, waits: boolean) => {
      if (waits) waiting.add(runId);
      else waiting.delete(runId);
      report();
    },
  };
  report();
  const outcomes = await Promise.all(
    group.targets.map(async (target): Promise<TargetOutcome> => {
      const outcome: TargetOutcome = { failed: null, unhealthy: null };
      try {
        const place = { runId: target.runId, serverId: target.serverId, organizationId: group.run.organizationId, workflowId };
        await runInTurn(targetRunInput(group.run, target, group.batch), () => bookkeeping.takeTurn(place), shared);
        if (check) outcome.unhealthy = await check(target);
      } catch (error) {
        outcome.failed = targetFailureLine(target, error);
      }
      ended += 1;
      if (outcome.failed ?? outcome.unhealthy) failed += 1;
      report();
      return outcome;
    }),
  );
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('Cancelled while its targets ran');
  return outcomes;
}

/**
 * A batch's targets, run in groups (children of the fleet run's workflow); how each ended, in the
 * batch's order. A group that did not complete (cancelled or terminated by hand) fails each of its
 * targets with its reason.
 */
export async function runBatchInGroups(run: FleetRunInput, targets: FleetTarget[], batch: number, healthCheck: HealthCheck | null): Promise<TargetOutcome[]> {
  const groups = groupsOf(targets);
  const { runId, organizationId, deploymentId, deploymentName, triggeredBy } = run;
  const outcomes = await Promise.all(
    groups.map(async (members, index) => {
      const input: TargetGroupInput = { run: { runId, organizationId, deploymentId, deploymentName, triggeredBy }, batch, targets: members, healthCheck };
      const servers = members.map((t) => t.serverTitle);
      try {
        return await executeChild(fleetTargetGroupWorkflow, {
          workflowId: fleetTargetGroupWorkflowId(runId, batch, index + 1),
          args: [input],
          typedSearchAttributes: fleetSearchAttributes(run),
          staticSummary: `${deploymentName}: batch ${batch}, group ${index + 1}/${groups.length} (${members.length} servers)`,
          staticDetails: `**Fleet run** ${runId}\n\n**Servers** ${servers.slice(0, 50).join(', ')}${servers.length > 50 ? ', …' : ''}`,
          // The fleet run terminated by hand: its targets are cancelled cleanly, their commands killed.
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        });
      } catch (error) {
        return members.map((target) => ({ failed: targetFailureLine(target, error), unhealthy: null }));
      }
    }),
  );
  return outcomes.flat();
}
