import type { Types } from 'mongoose';
import type { Action } from '../../domain/access/roles';
import { DeploymentModel, type Deployment } from '../../domain/deployments/model';
import type { ParameterDefinition } from '../../domain/deployments/parameters';
import type { Pipeline } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import type { FindDeployment } from '../deployments/definitions';
import { resolveTargets, type TargetServer } from '../deployments/targets';
import { findPipeline } from '../pipelines/lookup';

/*
 * What a schedule runs: a deployment (each tick a run of it) or a pipeline (each tick a pipeline
 * run). Everything else about a schedule — timing, overlap, pause, run-as, ticks — is the same.
 */

/** A deployment or a pipeline, as a schedule needs it. */
export interface ScheduleOwner {
  _id: Types.ObjectId;
  organization_id: Types.ObjectId;
  name: string;
  parameters?: readonly ParameterDefinition[] | null;
}

/** `T`: the owner as found (its servers are read from it). */
export interface ScheduleTarget<T extends ScheduleOwner = ScheduleOwner> {
  kind: 'deployment' | 'pipeline';
  /** The schedule document's field naming it. */
  field: 'deployment_id' | 'pipeline_id';
  /** Found as the gate allows `action` on it (a pipeline: on every stage's deployment); 404 or 403 otherwise. */
  find(principal: Principal, id: string, action?: Action): Promise<T>;
  /** The servers its ticks would run on now (what a freeze may cover). */
  servers(owner: T): Promise<TargetServer[]>;
}

export const deploymentScheduleTarget = (findDeployment: FindDeployment): ScheduleTarget<Deployment> => ({
  kind: 'deployment',
  field: 'deployment_id',
  find: (principal, id, action) => findDeployment(principal, id, action),
  servers: (deployment) => resolveTargets(deployment),
});

export const pipelineScheduleTarget: ScheduleTarget<Pipeline> = {
  kind: 'pipeline',
  field: 'pipeline_id',
  find: (principal, id, action) => findPipeline(principal, id, action),
  /** Every stage's deployment's servers. */
  async servers(pipeline) {
    const deployments = await DeploymentModel.find({ _id: { $in: pipeline.stages.map((s) => s.deployment_id) } }).lean<Deployment[]>();
    return (await Promise.all(deployments.map((d) => resolveTargets(d)))).flat();
  },
};
