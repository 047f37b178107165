import type { ClientSession, Types } from 'mongoose';
import type { Actor } from '../access/actor';
import { PipelineRunModel, PipelineModel, type Pipeline } from './model';

/*
 * The pipelines store: a pipeline's definition, written only here. A change applies to the runs
 * triggered after it (a run keeps a snapshot of its stages).
 */

/** A stage as it is stored: its deployment by id, its parameters as name and value (expressions kept as text). */
export interface StageDefinition {
  name: string;
  deployment_id: Types.ObjectId;
  needs: string[];
  when: 'success' | 'failure' | 'always';
  gate: { approvals: number; expires_in: string } | null;
  parameters: Array<{ name: string; value: string }>;
}

export interface PipelineDefinition {
  name: string;
  description: string | null;
  parameters: Array<{ name: string; description?: string; required?: boolean; default?: string; secret?: boolean; pattern?: string }>;
  stages: StageDefinition[];
}

/** A new pipeline; rejects with code 11000 when the organization has one of that name. */
export async function createPipeline(organizationId: string, definition: PipelineDefinition, by: Actor): Promise<Pipeline> {
  const created = await PipelineModel.create({ ...definition, organization_id: organizationId, created_by: by, updated_by: by });
  return created.toObject() as Pipeline;
}

/** A definition changed by `by`; rejects with code 11000 when renamed to a name the organization uses. */
export async function redefinePipeline(id: Types.ObjectId, changes: Partial<PipelineDefinition>, by: Actor, forced: Record<string, Date | string> = {}): Promise<Pipeline | null> {
  return PipelineModel.findOneAndUpdate({ _id: id }, { $set: { ...changes, updated_by: by, ...forced } }, { returnDocument: 'after' }).lean<Pipeline>();
}

/** A pipeline and its run history, gone (within `session`: an apply's transaction). */
export async function deletePipeline(id: Types.ObjectId, session?: ClientSession): Promise<void> {
  await PipelineModel.deleteOne({ _id: id }, { session });
  await PipelineRunModel.deleteMany({ pipeline_id: id }, { session });
}

/** The names of the pipelines that have a stage running this deployment. */
export async function pipelinesUsing(deploymentId: Types.ObjectId): Promise<string[]> {
  const pipelines = await PipelineModel.find({ 'stages.deployment_id': deploymentId }, { name: 1 }).sort({ name: 1 }).lean();
  return pipelines.map((p) => p.name);
}
