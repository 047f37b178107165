import type { Types } from 'mongoose';
import { DeploymentRunModel, FINAL_RUN_STATUSES, type RunStatus } from '../deployments/model';
import { FINAL_PIPELINE_RUN_STATUSES, PipelineRunModel, type PipelineRunStatus } from '../pipelines/model';

/*
 * The runs a schedule's ticks start: a deployment's schedule starts deployment runs, a pipeline's
 * pipeline runs. Ids are unique across both, so a tick's run is found by its id alone.
 */

/** Of these runs, those still going at `at` (or now): begun by then, not finished by then. */
export async function runsGoing(runIds: Types.ObjectId[], at?: Date): Promise<Types.ObjectId[]> {
  if (!runIds.length) return [];
  const filter = at ? { _id: { $in: runIds }, createdAt: { $lte: at }, $or: [{ completed_at: null }, { completed_at: { $gt: at } }] } : { _id: { $in: runIds }, completed_at: null };
  const [runs, pipelineRuns] = await Promise.all([DeploymentRunModel.find(filter, { _id: 1 }).lean(), PipelineRunModel.find(filter, { _id: 1 }).lean()]);
  return [...runs, ...pipelineRuns].map((run) => run._id);
}

/** A tick's run's status and whether it is final; null when there is no such run (deleted). */
export async function tickRunStatus(runId: string): Promise<{ status: string; final: boolean } | null> {
  const run = await DeploymentRunModel.findById(runId, { status: 1 }).lean<{ status: string }>();
  if (run) return { status: run.status, final: FINAL_RUN_STATUSES.includes(run.status as RunStatus) };
  const pipelineRun = await PipelineRunModel.findById(runId, { status: 1 }).lean<{ status: string }>();
  return pipelineRun ? { status: pipelineRun.status, final: FINAL_PIPELINE_RUN_STATUSES.includes(pipelineRun.status as PipelineRunStatus) } : null;
}
