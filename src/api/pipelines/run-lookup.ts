import { Types } from 'mongoose';
import { PipelineModel, PipelineRunModel, type Pipeline, type PipelineRun } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import type { DeploymentService } from '../deployments/service';
import { ApiError, notFound } from '../http/errors';

/** A pipeline of the caller's organization whose every stage's deployment the caller may read; any other is a 404. */
export async function readablePipeline(principal: Principal, id: string, deployments: Pick<DeploymentService, 'findDeployment'>): Promise<Pipeline> {
  if (!Types.ObjectId.isValid(id)) throw notFound('Pipeline');
  const pipeline = await PipelineModel.findOne({ _id: id, organization_id: principal.organizationId }).lean<Pipeline>();
  if (!pipeline) throw notFound('Pipeline');
  try {
    await Promise.all(pipeline.stages.map((stage) => deployments.findDeployment(principal, stage.deployment_id.toString())));
  } catch (error) {
    if (error instanceof ApiError && error.code === 'not_found') throw notFound('Pipeline');
    throw error;
  }
  return pipeline;
}

/** One of the pipeline's runs; another pipeline's (or organization's) is a 404. */
export async function runOfPipeline(pipeline: Pipeline, runId: string): Promise<PipelineRun> {
  if (!Types.ObjectId.isValid(runId)) throw notFound('Pipeline run');
  const run = await PipelineRunModel.findOne({ _id: runId, pipeline_id: pipeline._id }).lean<PipelineRun>();
  if (!run) throw notFound('Pipeline run');
  return run;
}
