import { triggeredByText } from '../../domain/access/actor';
import type { StageChild, StageRunStarter, StageStart } from '../../domain/contracts/pipelines';
import type { DeploymentRun } from '../../domain/deployments/model';
import { openParameters } from '../../domain/deployments/parameters';
import { describeReference, substitute } from '../../domain/pipelines/expressions';
import { PipelineRunModel, type PipelineRun, type PipelineRunStage } from '../../domain/pipelines/model';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { runStart } from '../../domain/temporal/run-workflows';
import { actAsServiceAccount, authenticateIdentity, type Principal } from '../../domain/tokens/service';
import type { DeploymentService } from '../deployments/service';
import { ApiError } from '../http/errors';

/*
 * A pipeline stage's deployment run, through the trigger path every client uses: triggered as the
 * pipeline run's actor (their grants now, narrowed by the scopes of the token they triggered it
 * with), with the stage's parameters, its expressions replaced by the pipeline run's parameters and
 * the outputs of the stages before. Stored and queued, not started: the pipeline run's workflow
 * starts it as its child. Keyed by the pipeline run and stage, so a retried activity finds it.
 */

/** Who a stage's run is triggered as, or why they no longer may trigger anything. */
async function stagePrincipal(run: PipelineRun): Promise<Principal | string> {
  const actor = run.actor;
  if (!actor) return 'unknown';
  const principal = await (actor.type === 'person' ? authenticateIdentity(actor.id.toString()) : actAsServiceAccount(actor.id.toString()));
  if (typeof principal === 'string') return principal;
  return { ...principal, scopes: run.scopes?.length ? run.scopes : ['admin'], tokenId: actor.token_id ? actor.token_id.toString() : null, tokenName: actor.token_id ? run.triggered_by : null };
}

/** The stage's parameters with their expressions replaced, or every reason one cannot be. */
function stageParameters(run: PipelineRun, stage: PipelineRunStage, secretBox: SecretBox): { values: Record<string, string> } | { failed: string } {
  const given = new Map(openParameters(run, secretBox).map((p) => [p.name, p.value]));
  const problems: string[] = [];
  const values: Record<string, string> = {};
  for (const { name, value } of stage.parameters) {
    values[name] = substitute(value, (reference) => {
      if (reference.kind === 'parameter') return given.get(reference.name) ?? '';
      const source = run.stages.find((s) => s.name === reference.stage);
      const conflict = (source?.output_conflicts as Record<string, string> | undefined)?.[reference.name];
      const output = (source?.outputs as Record<string, string> | undefined)?.[reference.name];
      if (conflict) problems.push(`${describeReference(reference)}: the servers of stage ${reference.stage} gave different values (${conflict})`);
      else if (output === undefined) problems.push(`${describeReference(reference)}: stage ${reference.stage} wrote no output ${reference.name} to $BOSUN_OUTPUT`);
      return output ?? '';
    });
  }
  return problems.length ? { failed: problems.join('; ') } : { values };
}

/** The child workflow that runs the stage's deployment run. */
function childOf(run: DeploymentRun, deploymentName: string): StageChild {
  if (!run.fleet) return { kind: 'one', input: runStart(run, deploymentName) };
  return {
    kind: 'fleet',
    input: { runId: run._id.toString(), organizationId: run.organization_id.toString(), deploymentId: run.deployment_id.toString(), deploymentName, triggeredBy: triggeredByText(run) },
    targets: run.fleet.total,
  };
}

const refusalOf = (error: ApiError) => [error.message, ...(error.details ?? []).map((d) => `${d.path}: ${d.message}`)].join('; ');

export function stageRunStarter({ deployments, secretBox }: { deployments: Pick<DeploymentService, 'trigger'>; secretBox: SecretBox }): StageRunStarter {
  return {
    async create({ pipelineRunId, stage: name }): Promise<StageStart> {
      const run = await PipelineRunModel.findById(pipelineRunId).lean<PipelineRun>();
      const stage = run?.stages.find((s) => s.name === name);
      if (!run || !stage) return { failed: 'the pipeline run or its stage no longer exists' };
      const principal = await stagePrincipal(run);
      if (typeof principal === 'string') return { failed: `${run.actor?.name ?? 'who triggered the pipeline run'} may no longer run anything (${principal})` };
      const parameters = stageParameters(run, stage, secretBox);
      if ('failed' in parameters) return parameters;
      try {
        const { run: stored } = await deployments.trigger(principal, stage.deployment_id.toString(), `pipeline-run-${pipelineRunId}-${name}`, { parameters: parameters.values }, { pipeline: { id: run._id, name: run.pipeline_name, stage: name }, definition: stage.definition });
        return { runId: stored._id.toString(), child: childOf(stored, stage.deployment_name) };
      } catch (error) {
        // Refused for good (forbidden, invalid, no targets): the stage fails saying why. Bosun busy or away: retried.
        if (error instanceof ApiError && error.status < 500 && error.status !== 429) return { failed: refusalOf(error) };
        throw error;
      }
    },
  };
}
