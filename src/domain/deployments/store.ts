import type { ClientSession, Types } from 'mongoose';
import { DeploymentModel, type Deployment } from './model';
import { deleteRunsOf } from './runs';

/*
 * The deployments store: a deployment's definition, written only here (its mark of the last run,
 * `last_run_*`, is the runs store's). Reads stay where they are: by id, by name, a page.
 */

type ServerRef = string | Types.ObjectId;

/** What a person defines: one server, or targets (listed servers and tags) with a strategy; its parameters and steps. */
export interface DeploymentDefinition {
  name: string;
  server_id?: ServerRef;
  targets?: { server_ids?: ServerRef[]; tags?: string[] };
  strategy?: { batch_size?: number | string | null; max_concurrency?: number | string | null; max_failures?: number | string | null; gates?: Array<{ before_batch?: number; before_target?: number; approvals: number; expires_in: string }>; health_check?: { command: string; soak_seconds?: number; timeout_seconds?: number; retries?: number; interval_seconds?: number } };
  rollback?: { steps: DeploymentDefinition['steps']; automatic?: boolean } | null;
  parameters?: Array<{ name: string; description?: string; required?: boolean; default?: string; secret?: boolean; pattern?: string }>;
  steps: Array<{ name: string; command: string; timeout_seconds?: number | null; retries?: number; continue_on_error?: boolean }>;
}

/** A new deployment; rejects with code 11000 when the organization has one of that name. */
export async function createDeployment(organizationId: string, definition: DeploymentDefinition): Promise<Deployment> {
  // Mongoose types its Mixed fields (the strategy's counts) as schema options: the definition is typed above.
  const created = await DeploymentModel.create({ ...definition, organization_id: organizationId } as Record<string, unknown>);
  return created.toObject() as Deployment;
}

/**
 * A definition changed (runs triggered before keep the steps they were triggered with). Switching
 * between one server and many clears the other kind: a deployment has exactly one. Rejects with code
 * 11000 when renamed to a name the organization uses. `forced`: who forced a change to a deployment a Git source manages (src/api/config/ownership.ts).
 */
export async function redefineDeployment(id: Types.ObjectId, changes: Partial<DeploymentDefinition>, forced: Record<string, Date | string> = {}): Promise<Deployment | null> {
  const kind = changes.server_id ? { targets: null, strategy: null, rollback: null } : changes.targets ? { server_id: null } : {};
  return DeploymentModel.findOneAndUpdate({ _id: id }, { $set: { ...changes, ...kind, ...forced } }, { returnDocument: 'after' }).lean<Deployment>();
}

/** A deployment and its run history, gone (within `session`: an apply's transaction). */
export async function deleteDeployment(id: Types.ObjectId, session?: ClientSession): Promise<void> {
  await DeploymentModel.deleteOne({ _id: id }, { session });
  await deleteRunsOf(id, session);
}
