import { randomUUID } from 'node:crypto';
import type { Action } from '../../domain/access/roles';
import type { GateDecision, GateDecisionResult, PauseResult } from '../../domain/contracts/runs';
import { gateRefusal } from '../../domain/deployments/gates';
import { DeploymentModel, DeploymentRunModel, type DeploymentRun } from '../../domain/deployments/model';
import type { RunWorkflows } from '../../domain/temporal/run-workflows';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { assertMayDecideGate, assertOnRunServers } from '../access/gate';
import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import type { RunReads } from './run-reads';

type Outcome<T> = T | 'refused' | 'gone' | 'unanswered';

/**
 * People's decisions on a fleet run between its batches: approve or reject the gate it waits at,
 * pause it, resume it, roll it back, whatever the client (API, CLI, console). The gate judges who
 * may: the caller on every target of the run, and only a person approves; never the one who
 * triggered the run (gateRefusal, which the store's write holds to as well). The run's workflow
 * then has its store record the decision and acts on it.
 */
export function runGuards({ workflows, runs }: { workflows: Pick<RunWorkflows, 'decideGate' | 'pause' | 'resume' | 'startRollback'>; runs: Pick<RunReads, 'findRun' | 'getRun'> }) {
  /** `action` on every server the run touches (its targets now, not the deployment's): 403 naming the others. */
  async function checkRunServers(principal: Principal, deploymentId: string, run: DeploymentRun, action: Action) {
    const ids = run.fleet ? await DeploymentRunModel.distinct('server_id', { parent_run_id: run._id }) : [run.server_id];
    await assertOnRunServers(principal, deploymentId, ids, action);
  }

  /** A workflow's answer, or why there is none: the run's state decides the error. */
  function unanswered(outcome: 'refused' | 'gone' | 'unanswered'): never {
    if (outcome === 'unanswered') throw new ApiError('service_unavailable', 'No worker took the decision in time; it may still be recorded: read the run before trying again');
    throw new ApiError('conflict', 'The run’s workflow is not running (it ended, or was terminated): nothing waits for this decision');
  }

  async function decide(principal: Principal, deploymentId: string, runId: string, decision: GateDecision) {
    const run = await runs.findRun(principal, deploymentId, runId);
    await checkRunServers(principal, deploymentId, run, 'approve');
    // What the run's state refuses comes first (a finished run is 409 for anyone); then who may decide.
    const refusal = gateRefusal(run, decision.kind, principal.identity, new Date());
    if (refusal && (refusal.refused === 'expired' || refusal.refused === 'not_awaiting_approval')) throw new ApiError(refusal.refused, refusal.message);
    assertMayDecideGate(principal);
    if (refusal) throw new ApiError(refusal.refused, refusal.message);
    const outcome: Outcome<GateDecisionResult> = await unlessTemporalUnreachable('pass the decision on', () => workflows.decideGate(runId, decision));
    if (typeof outcome === 'string') {
      // The workflow waits at no gate: the store says why (it expired a moment ago, say).
      const now = await DeploymentRunModel.findById(run._id, { status: 1, gate: 1, actor: 1 }).lean<DeploymentRun>();
      const why = gateRefusal(now, decision.kind, principal.identity, new Date());
      if (why) throw new ApiError(why.refused, why.message);
      unanswered(outcome);
    }
    if ('refused' in outcome) throw new ApiError(outcome.refused, outcome.message);
    return runs.getRun(principal, deploymentId, runId);
  }

  async function pauseOrResume(principal: Principal, deploymentId: string, runId: string, kind: 'pause' | 'resume', reason: string) {
    const run = await runs.findRun(principal, deploymentId, runId);
    await checkRunServers(principal, deploymentId, run, 'deployments:run');
    if (!run.fleet) throw new ApiError('conflict', 'Only a fleet run pauses (between its batches); cancel stops a one-server run');
    if (kind === 'pause' && (run.status !== 'running' || run.pause)) {
      throw new ApiError('conflict', run.pause ? `The run is already ${run.status === 'paused' ? 'paused' : 'pausing'}` : `Only a running run can be paused (it is ${run.status})`);
    }
    if (kind === 'resume' && !run.pause) throw new ApiError('conflict', `The run is not paused (it is ${run.status})`);
    const request = { by: actorOf(principal), reason };
    const outcome: Outcome<PauseResult> = await unlessTemporalUnreachable(`${kind} the run`, () => (kind === 'pause' ? workflows.pause(runId, request) : workflows.resume(runId, request)));
    if (typeof outcome === 'string') unanswered(outcome);
    if ('refused' in outcome) throw new ApiError('conflict', outcome.message);
    return runs.getRun(principal, deploymentId, runId);
  }

  /** A rollback asked for, of a finished fleet run that failed: its rollback steps on every server it touched. */
  async function rollbackRun(principal: Principal, deploymentId: string, runId: string, reason: string | undefined) {
    const run = await runs.findRun(principal, deploymentId, runId);
    await checkRunServers(principal, deploymentId, run, 'deployments:run');
    if (!run.fleet) throw new ApiError('conflict', 'Only a fleet run rolls back (its deployment’s rollback steps); retry or run another deployment on one server');
    if (!run.fleet.rollback?.steps.length) throw new ApiError('conflict', 'The run has no rollback steps: its deployment had none when it was triggered');
    if (run.status !== 'failed') throw new ApiError('conflict', `Only a run that failed is rolled back (it is ${run.status})`);
    if (run.rollback) throw new ApiError('conflict', `The run was rolled back already (${run.rollback.summary ?? run.rollback.status})`);
    const requestedBy = actorOf(principal);
    const why = `rollback asked by ${principal.identity.name}: ${reason ?? run.error ?? 'the run failed'}`;
    const deployment = await DeploymentModel.findById(run.deployment_id, { name: 1 }).lean();
    const started = await unlessTemporalUnreachable('start the rollback', () => workflows.startRollback({ runId, reason: why, requestedBy }, deployment?.name ?? '(deleted)'));
    if (!started) throw new ApiError('conflict', 'A rollback of this run was asked for already');
    return runs.getRun(principal, deploymentId, runId);
  }

  return {
    rollbackRun,
    approveRun: (principal: Principal, deploymentId: string, runId: string, comment: string | null) => decide(principal, deploymentId, runId, { kind: 'approve', by: actorOf(principal), comment, id: randomUUID() }),
    rejectRun: (principal: Principal, deploymentId: string, runId: string, reason: string) => decide(principal, deploymentId, runId, { kind: 'reject', by: actorOf(principal), reason, id: randomUUID() }),
    pauseRun: (principal: Principal, deploymentId: string, runId: string, reason: string) => pauseOrResume(principal, deploymentId, runId, 'pause', reason),
    resumeRun: (principal: Principal, deploymentId: string, runId: string) => pauseOrResume(principal, deploymentId, runId, 'resume', ''),
  };
}
