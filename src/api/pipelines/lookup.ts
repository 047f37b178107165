import type { Types } from 'mongoose';
import type { Action } from '../../domain/access/roles';
import { DeploymentModel } from '../../domain/deployments/model';
import { PipelineModel, type Pipeline } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import { checkPipeline, type StageDeployment } from '../access/gate';
import { resolveTargets } from '../deployments/targets';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';

/* Finding a pipeline as the gate allows it, and the names of its stages' deployments. */

/** The stages as the gate asks about them: each deployment's targets looked up only if the question needs them. */
export async function stageDeployments(stages: ReadonlyArray<{ name: string; deployment_id: Types.ObjectId }>): Promise<StageDeployment[]> {
  const deployments = await DeploymentModel.find({ _id: { $in: stages.map((s) => s.deployment_id) } }, { organization_id: 1, server_id: 1, targets: 1 }).lean();
  const byId = new Map(deployments.map((d) => [d._id.toString(), d]));
  return stages.map(({ name, deployment_id }) => {
    const deployment = byId.get(deployment_id.toString());
    return { name, deployment_id, targets: async () => (deployment ? resolveTargets(deployment) : []) };
  });
}

/**
 * A pipeline of the caller's organization whose every stage's deployment it may read (404
 * otherwise, as another organization's), and `action` allowed on each of them (403 naming the stage).
 */
export async function findPipeline(principal: Principal, id: string, action: Action = 'read'): Promise<Pipeline> {
  const pipeline = await PipelineModel.findById(parseId(id, 'Pipeline')).lean<Pipeline>();
  if (!pipeline || pipeline.organization_id.toString() !== principal.organizationId) throw notFound('Pipeline');
  await checkPipeline(principal, await stageDeployments(pipeline.stages), action);
  return pipeline;
}

/** The names of the deployments the pipelines' stages run, by id. */
export async function deploymentNamesOf(pipelines: readonly Pipeline[]): Promise<Map<string, string>> {
  const ids = pipelines.flatMap((p) => p.stages.map((s) => s.deployment_id));
  if (!ids.length) return new Map();
  const deployments = await DeploymentModel.find({ _id: { $in: ids } }, { name: 1 }).lean();
  return new Map(deployments.map((d) => [d._id.toString(), d.name]));
}
