import { Types } from 'mongoose';
import { PipelineRunModel, type Pipeline, type PipelineRun } from '../../domain/pipelines/model';
import type { Principal } from '../../domain/tokens/service';
import { notFound } from '../http/errors';
import { findPipeline } from './lookup';

/** A pipeline the caller may read (findPipeline: a 404 as another organization's otherwise). */
export const readablePipeline = (principal: Principal, id: string): Promise<Pipeline> => findPipeline(principal, id);

/** One of the pipeline's runs; another pipeline's (or organization's) is a 404. */
export async function runOfPipeline(pipeline: Pipeline, runId: string): Promise<PipelineRun> {
  if (!Types.ObjectId.isValid(runId)) throw notFound('Pipeline run');
  const run = await PipelineRunModel.findOne({ _id: runId, pipeline_id: pipeline._id }).lean<PipelineRun>();
  if (!run) throw notFound('Pipeline run');
  return run;
}
