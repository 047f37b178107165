import { randomUUID } from 'node:crypto';
import type { StageGateDecision } from '../../domain/contracts/pipelines';
import { gateRefusal } from '../../domain/deployments/gates';
import { PipelineRunModel, type PipelineRun } from '../../domain/pipelines/model';
import type { WorkflowGateway } from '../../domain/temporal/client';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { assertMayDecideGate, assertOnRunServers } from '../access/gate';
import type { DeploymentService } from '../deployments/service';
import { resolveTargets } from '../deployments/targets';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import { findPipeline } from './lookup';
import { runOfPipeline } from './run-lookup';
import type { PipelineRunView } from './run-views';

/** Why a decision on a stage's gate is refused now, by the approval rules every gate keeps (gateRefusal), in a stage's words. */
function stageRefusal(run: PipelineRun | null, name: string, kind: 'approve' | 'reject', by: Principal['identity']) {
  const stage = run?.stages.find((s) => s.name === name);
  const holder = run && stage ? { status: stage.status === 'awaiting_approval' ? 'awaiting_approval' : stage.status, gate: stage.gate_state, actor: run.actor } : null;
  const refusal = gateRefusal(holder as never, kind, by, new Date());
  if (!refusal) return null;
  const message = refusal.refused === 'not_awaiting_approval' ? `Stage "${name}" is not awaiting approval (it is ${stage?.status ?? 'gone'})` : refusal.message.replace('this run', 'this pipeline run');
  return new ApiError(refusal.refused, message);
}

/**
 * People's decisions at a stage's gate, whatever the client: only a person, with `approve` on every
 * server of the stage's deployment, never the one who triggered the pipeline run, each once; the
 * pipeline run's workflow has its store record it and acts on it.
 */
export function stageDecisions({ workflows, deployments, reread }: { workflows: WorkflowGateway; deployments: DeploymentService; reread: (run: PipelineRun) => Promise<PipelineRunView> }) {
  async function decide(principal: Principal, pipelineId: string, runId: string, name: string, kind: 'approve' | 'reject', text: string | null) {
    const pipeline = await findPipeline(principal, pipelineId);
    const run = await runOfPipeline(pipeline, runId);
    const stage = run.stages.find((s) => s.name === name);
    if (!stage) throw notFound('Stage');
    const deployment = await deployments.findDeployment(principal, stage.deployment_id.toString());
    await assertOnRunServers(principal, deployment._id.toString(), (await resolveTargets(deployment)).map((s) => s._id), 'approve');
    // What the run's state refuses comes first (a decided gate is 409 for anyone); then who may decide.
    const refusal = stageRefusal(run, name, kind, principal.identity);
    if (refusal && (refusal.code === 'expired' || refusal.code === 'not_awaiting_approval')) throw refusal;
    assertMayDecideGate(principal);
    if (refusal) throw refusal;
    const decision: StageGateDecision = { stage: name, decision: kind, id: randomUUID(), by: actorOf(principal), comment: text };
    const outcome = await unlessTemporalUnreachable('pass the decision on', () => workflows.pipelines.decideStage(runId, decision));
    if (outcome === 'unanswered') throw new ApiError('service_unavailable', 'No worker took the decision in time; it may still be recorded: read the pipeline run before trying again');
    if (typeof outcome === 'string') {
      const why = stageRefusal(await PipelineRunModel.findById(run._id).lean<PipelineRun>(), name, kind, principal.identity);
      throw why ?? new ApiError('conflict', 'The pipeline run’s workflow waits for no decision on this stage');
    }
    return reread(run);
  }

  return {
    approveStage: (principal: Principal, pipelineId: string, runId: string, stage: string, comment: string | null) => decide(principal, pipelineId, runId, stage, 'approve', comment),
    rejectStage: (principal: Principal, pipelineId: string, runId: string, stage: string, reason: string) => decide(principal, pipelineId, runId, stage, 'reject', reason),
  };
}
