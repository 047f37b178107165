import type { Types } from 'mongoose';
import { DeploymentRunModel } from '../deployments/model';
import { asObjectId } from '../ids';
import { runsAhead } from './order';
import { claimTurn, releaseTurn, turnHolder } from '../servers/run-turn';

/*
 * Whose turn it is on a server. Runs on one server never interleave: a run takes the server's turn
 * before its first step, and its end gives it back. A run with nothing ahead of it takes the turn
 * itself; the server's queue workflow gives it, in order, to runs that wait.
 */

/**
 * The server's turn for `runId`: taken when free or already its own (a retried call), or when the
 * run holding it has ended (its end could not give it back: a crash between the two writes). 'gone':
 * the server no longer exists. `by`: the run itself, or the server's queue workflow giving it.
 */
export async function takeTurn(serverId: string | Types.ObjectId, runId: string | Types.ObjectId, by: 'run' | 'queue'): Promise<'taken' | 'busy' | 'gone'> {
  const run = asObjectId(runId);
  const byQueue = by === 'queue';
  if (await claimTurn(serverId, run, byQueue)) return 'taken';
  const holder = await turnHolder(serverId);
  if (holder === undefined) return 'gone';
  if (holder === null) return (await claimTurn(serverId, run, byQueue)) ? 'taken' : 'busy';
  if (await DeploymentRunModel.exists({ _id: holder, status: { $in: ['queued', 'running'] } })) return 'busy';
  return (await claimTurn(serverId, run, byQueue, holder)) ? 'taken' : 'busy';
}

/**
 * A run placed at `place` in its server's queue (`turn`: it took the turn with its place) keeps or
 * takes the turn itself when nothing is ahead of it there: no run queued before it, and none
 * running. Something ahead: a turn taken goes back, and the run waits for the queue to give it.
 */
export async function takeTurnIfFirst(serverId: string, runId: string, { place, turn }: { place: number; turn: boolean }): Promise<'taken' | 'busy' | 'gone'> {
  if (await runsAhead(serverId, runId, place)) {
    if (turn) await releaseTurn(serverId, asObjectId(runId));
    return 'busy';
  }
  return turn ? 'taken' : takeTurn(serverId, runId, 'run');
}
