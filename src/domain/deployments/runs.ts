import type { Types } from 'mongoose';
import { DeploymentRunModel } from './model';

/**
 * Ends a run that nothing will carry on (still in `from`): its final status, and every step that
 * had not finished cancelled. False when the run was no longer in `from`.
 */
export async function closeRun(runId: Types.ObjectId, from: 'queued' | 'running', to: 'cancelled' | 'failed', extra: Record<string, unknown> = {}) {
  const result = await DeploymentRunModel.updateOne(
    { _id: runId, status: from },
    { $set: { ...extra, status: to, completed_at: new Date(), 'steps.$[open].status': 'cancelled' }, $inc: { seq: 1 } },
    { arrayFilters: [{ 'open.status': { $in: ['pending', 'running'] } }] },
  );
  return result.modifiedCount > 0;
}
