import type { Types } from 'mongoose';
import { DeploymentRunModel } from '../deployments/model';
import { releaseTurn } from './server-turn';

/** A run's fields that giving back its turn reads. */
export type TurnHolder = { _id: Types.ObjectId; server_id?: Types.ObjectId | null; queue_seq?: number | null };

/**
 * A run ended (or will never run): its server's turn given back if it held it. When it did, and runs
 * took places in the queue after its own meanwhile, the first of those still waiting: its queue must
 * be woken to give it its turn. Repeating it is harmless.
 */
export async function giveBackTurn(run: TurnHolder): Promise<Types.ObjectId | null> {
  if (!run.server_id) return null;
  const lastPlace = await releaseTurn(run.server_id, run._id);
  if (lastPlace === null || lastPlace <= (run.queue_seq ?? 0)) return null;
  const waiting = await DeploymentRunModel.collection.findOne(
    { server_id: run.server_id, status: 'queued', queue_seq: { $ne: null } },
    { projection: { _id: 1 }, sort: { queue_seq: 1 } },
  );
  return (waiting?._id as Types.ObjectId | undefined) ?? null;
}
