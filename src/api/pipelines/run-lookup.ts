import { PipelineRunModel, type Pipeline, type PipelineRun } from '../../domain/pipelines/model';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';

/** One of the pipeline's runs; another pipeline's (or organization's) is a 404. */
export async function runOfPipeline(pipeline: Pipeline, runId: string): Promise<PipelineRun> {
  const run = await PipelineRunModel.findOne({ _id: parseId(runId, 'Pipeline run'), pipeline_id: pipeline._id }).lean<PipelineRun>();
  if (!run) throw notFound('Pipeline run');
  return run;
}
