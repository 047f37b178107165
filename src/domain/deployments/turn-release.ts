import type { Types } from 'mongoose';
import { releaseTurn } from '../servers/run-turn';
import { DeploymentRunModel } from './model';

/** A run's fields that giving back its turn reads. */
export type TurnHolder = { _id: Types.ObjectId; server_id?: Types.ObjectId | null; queue_seq?: number | null };

/**
 * A run ended (or will never run): its server's turn given back if it held it. When it had taken
 * the turn itself, and runs took places in the queue after its own meanwhile, the first of those
 * still waiting: its queue must be woken to give it its turn. A turn the queue gave needs no wake:
 * the queue waits for that run's end (its child's result, or its `released` signal) and then gives
 * the turn to the next. Repeating it is harmless.
 */
export async function giveBackTurn(run: TurnHolder): Promise<Types.ObjectId | null> {
  if (!run.server_id) return null;
  const released = await releaseTurn(run.server_id, run._id);
  if (released === null || released.byQueue || released.lastPlace <= (run.queue_seq ?? 0)) return null;
  const waiting = await DeploymentRunModel.collection.findOne(
    { server_id: run.server_id, status: 'queued', queue_seq: { $ne: null } },
    { projection: { _id: 1 }, sort: { queue_seq: 1 } },
  );
  return (waiting?._id as Types.ObjectId | undefined) ?? null;
}
