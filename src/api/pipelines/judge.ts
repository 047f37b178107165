import type { z } from 'zod';
import type { Principal } from '../../domain/tokens/service';
import type { StageDefinition } from '../../domain/pipelines/store';
import { ApiError, type ErrorDetail } from '../http/errors';
import { issueDetails } from '../http/validation';
import { checkStages, type LooseDefinition, type LooseStage } from './definition-checks';
import { checkStageDeployment, deploymentsNamed, outputWarnings, type StageDeploymentDoc } from './stage-deployments';
import type { StageInput } from './schemas';

/**
 * A definition judged whole, its schema's issues with its stages' problems together and their
 * deployments': one 422 naming every problem. `definition` is what the pipeline would be (a change's
 * fields over the pipeline as it is). Otherwise the input, the stages' deployments and the warnings.
 */
export async function judgeDefinition<S extends z.ZodType>(principal: Principal, schema: S, body: unknown, definition: LooseDefinition) {
  const parsed = schema.safeParse(body ?? {});
  const { problems, outputs } = checkStages(definition);
  const deployments = await deploymentsNamed(principal, definition.stages.flatMap((s) => (s ? [s.deployment] : [])));
  const deploymentOf = (stage: LooseStage) => deployments.get(stage.deployment);
  const all: ErrorDetail[] = [
    ...(parsed.success ? [] : issueDetails(parsed.error)),
    ...problems,
    ...definition.stages.flatMap((stage, i) => (stage ? checkStageDeployment(stage, i, deploymentOf(stage)) : [])),
  ];
  if (!parsed.success || all.length) throw new ApiError('validation_failed', 'The pipeline is invalid', all);
  return { input: parsed.data as z.infer<S>, deploymentOf: (reference: string) => deployments.get(reference.trim())!, warnings: outputWarnings(outputs, definition.stages, deploymentOf) };
}

/** A stage as the store keeps it: its deployment by id, its parameters as a list. */
export const storedStage = (stage: StageInput, deployment: StageDeploymentDoc): StageDefinition => ({
  name: stage.name,
  deployment_id: deployment._id,
  needs: stage.needs,
  when: stage.when,
  gate: stage.gate ?? null,
  parameters: Object.entries(stage.parameters).map(([name, value]) => ({ name, value })),
});
