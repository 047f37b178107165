import { createHash } from 'node:crypto';
import type { Deployment } from '../../domain/deployments/model';
import type { ParameterValue } from '../../domain/deployments/parameters';
import { substitute } from '../../domain/pipelines/expressions';
import type { Pipeline } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import { checkRunTargets } from '../access/gate';
import { ApiError } from '../http/errors';
import type { DeploymentService } from '../deployments/service';
import { planOf } from '../deployments/plan-hash';
import { resolveTargets, type TargetServer } from '../deployments/targets';

/*
 * A pipeline's plan: its graph, and each stage's deployment plan (targets, batches, steps, strategy,
 * parameters) as a trigger now would run it — an output of an earlier stage is not known yet, so
 * its expression stands for it. Its hash binds a trigger to what was reviewed (409 plan_changed).
 */

/**
 * Each stage's deployment with its targets now, found as the caller may run it (`run`: a trigger's,
 * a cancel's, a retry's) or read it (a plan's): 403 naming the stage otherwise.
 */
export async function runnableStages(principal: Principal, pipeline: Pipeline, deployments: Pick<DeploymentService, 'findDeployment'>, run = true) {
  return Promise.all(
    pipeline.stages.map(async (stage) => {
      try {
        const deployment = await deployments.findDeployment(principal, stage.deployment_id.toString(), run ? 'deployments:run' : 'read');
        const servers = await resolveTargets(deployment);
        if (run) await checkRunTargets(principal, deployment._id.toString(), servers);
        return { stage, deployment, servers };
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const code = error.code === 'not_found' ? 'forbidden' : error.code;
        throw new ApiError(code, `Stage "${stage.name}": ${error.code === 'not_found' ? 'its deployment is gone or not yours to run' : error.message}`, error.details);
      }
    }),
  );
}

/** The values a stage's deployment would run with now: its parameters, pipeline parameters replaced, outputs left as their expressions, else the deployment's defaults. */
function plannedValues(deployment: Deployment, stage: Pipeline['stages'][number], pipelineValues: ReadonlyMap<string, string>): ParameterValue[] {
  const given = new Map(stage.parameters.map((p) => [p.name, substitute(p.value, (ref) => (ref.kind === 'parameter' ? (pipelineValues.get(ref.name) ?? '') : `\${{ stages.${ref.stage}.outputs.${ref.name} }}`))]));
  return (deployment.parameters ?? []).flatMap((definition) => {
    const value = given.get(definition.name) ?? definition.default ?? null;
    return value === null ? [] : [{ name: definition.name, value, secret: !!definition.secret }];
  });
}

export function pipelinePlanOf(pipeline: Pipeline, stages: Array<{ stage: Pipeline['stages'][number]; deployment: Deployment; servers: TargetServer[] }>, values: ParameterValue[]) {
  const pipelineValues = new Map(values.map((v) => [v.name, v.value]));
  const planned = stages.map(({ stage, deployment, servers }) => {
    const plan = planOf(deployment, servers, plannedValues(deployment, stage, pipelineValues));
    return {
      name: stage.name,
      deployment: { id: deployment._id.toString(), name: deployment.name },
      needs: stage.needs,
      when: stage.when,
      gate: stage.gate ? { approvals: stage.gate.approvals, expires_in: stage.gate.expires_in } : null,
      parameters: Object.fromEntries(stage.parameters.map((p) => [p.name, p.value])),
      deployment_plan_hash: plan.hash,
      batches: servers.length ? plan.strategy.batches : 0,
      targets: servers.map((server) => ({ server_id: server._id.toString(), title: server.title, status: server.status })),
    };
  });
  // Secret values enter the hash digested with the rest: the hash is one-way.
  const hash = createHash('sha256')
    .update(JSON.stringify({ parameters: values.map((v) => [v.name, v.value]), stages: planned.map(({ targets: _targets, ...stage }) => stage) }))
    .digest('hex');
  return { plan_hash: hash, stages: planned };
}
