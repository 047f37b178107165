import { Types } from 'mongoose';
import type { Action } from '../../../domain/access/roles';
import type { Principal } from '../../../domain/tokens/service';
import { ApiError } from '../../http/errors';
import { checkDeployment, readableDeploymentIds } from './deployments';
import { refusal } from './refusals';
import type { NamedServer } from './servers';

/*
 * The gate's questions about pipelines: a pipeline is the caller's business when it may read the
 * deployment of every stage (as a deployment list judges them); an action on it is the action on
 * every stage's deployment.
 */

/** A stage as the gate asks about it: its name (for the refusal), its deployment and that deployment's targets now. */
export interface StageDeployment {
  name: string;
  deployment_id: Types.ObjectId;
  targets: () => Promise<readonly NamedServer[]>;
}

/** The MongoDB filter of a pipeline list: the organization's pipelines whose every stage's deployment the caller may read. */
export async function readablePipelineFilter(principal: Principal): Promise<Record<string, unknown>> {
  const organization_id = new Types.ObjectId(principal.organizationId);
  const readable = await readableDeploymentIds(principal);
  return readable ? { organization_id, stages: { $not: { $elemMatch: { deployment_id: { $nin: readable } } } } } : { organization_id };
}

/**
 * A pipeline the caller may not read every stage's deployment of is a 404, as another
 * organization's; `action` (other than read) must be allowed on every stage's deployment: 403
 * naming the first stage it is not.
 */
export async function checkPipeline(principal: Principal, stages: readonly StageDeployment[], action: Action = 'read'): Promise<void> {
  const readable = await readableDeploymentIds(principal);
  if (readable) {
    const ids = new Set(readable.map(String));
    if (stages.some((stage) => !ids.has(stage.deployment_id.toString()))) throw refusal('hidden', 'Pipeline');
  }
  if (action === 'read') return;
  // Asked of every stage at once; the first refused, in the stages' order, is the answer.
  const answers = await Promise.allSettled(stages.map((stage) => checkDeployment(principal, stage.deployment_id.toString(), stage.targets, action)));
  const refused = answers.findIndex((answer) => answer.status === 'rejected');
  if (refused < 0) return;
  const error = (answers[refused] as PromiseRejectedResult).reason as unknown;
  if (error instanceof ApiError && error.code === 'forbidden') throw refusal('forbidden', `stage "${stages[refused]!.name}": ${error.message}`, error.details);
  throw error;
}
