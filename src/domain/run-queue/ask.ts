import { Types } from 'mongoose';
import { failure } from '../contracts/failure-types';
import type { RunPlace, TurnOutcome, TurnRequest } from '../contracts/runs';
import { DeploymentRunModel } from '../deployments/model';
import { beginRun, stepsToRun } from '../deployments/runs';
import { beginPlacedTarget, failUnrunTarget, placeTarget } from '../deployments/targets';
import { holdOneServerRun } from '../deployments/freeze-hold';
import { ServerModel } from '../servers/model';
import { queuedPlace, runsAhead } from './order';
import { releaseTurn, takePlaceAndTurn } from '../servers/run-turn';
import { takeTurnIfFirst } from './turns';

/*
 * A run asks for its server's turn: one path for a one-server run (placed by its trigger) and a
 * fleet target (placed when its batch starts). It begins at once when nothing is ahead of it on its
 * server; otherwise it waits, and the server's queue gives it the turn in the order of the places.
 */

/** The server's turn taken: the run begins (its steps; null when it ended meanwhile, its turn given back). */
async function begin(runId: string, serverId: string): Promise<TurnOutcome> {
  const run = await beginRun(runId);
  if (!run) await releaseTurn(serverId, new Types.ObjectId(runId));
  // Begun with its turn: change freezes covering its server hold it before its first step.
  return { turn: true, steps: run && stepsToRun(run), frozen: await holdOneServerRun(run) };
}

/** A run whose server cannot take it (gone, or never verified: its host key unknown): it fails unrun. */
async function failUnplaceable({ runId, serverId, organizationId }: RunPlace): Promise<TurnOutcome> {
  const exists = await ServerModel.exists({ _id: serverId, organization_id: organizationId });
  const why = `Not run: ${exists ? 'the server has not been verified: its host key is unknown, so Bosun will not connect' : 'the server no longer exists'}`;
  // Not queued any more (a repeated call, or closed meanwhile): its begin finds how it ended.
  return (await failUnrunTarget(runId, why)) ? { failed: why } : { turn: true };
}

/**
 * A run that has its place (or asked before: its activity retried, or closed meanwhile): takes the
 * turn if nothing is ahead of it, else waits. `tookTurn`: it holds the turn already.
 */
async function fromItsPlace(input: RunPlace, tookTurn: boolean): Promise<TurnOutcome> {
  const { runId, serverId } = input;
  const queued = await queuedPlace(runId);
  if (!queued || queued.place === null) {
    if (tookTurn) await releaseTurn(serverId, new Types.ObjectId(runId));
    if (!queued && !(await DeploymentRunModel.exists({ _id: runId }))) throw failure('RunNotFound', `Run ${runId} does not exist`);
    // Begun before (its begin carries on), or ended (its begin finds how).
    return { turn: true };
  }
  const turn = await takeTurnIfFirst(serverId, runId, { place: queued.place, turn: tookTurn });
  if (turn === 'gone') return failUnplaceable(input);
  return turn === 'taken' ? begin(runId, serverId) : { queued: true };
}

/**
 * The server's turn for a run: `place` is the one its trigger took (a one-server run); without it
 * (a fleet target whose batch starts) the run takes a place now, and the turn with it when nobody
 * holds it, in one write; nothing ahead of it, it begins in that write too (with the place, a target
 * records the workflow it shares with others, `workflowId`). Repeating it is harmless.
 */
export async function askForTurn(input: TurnRequest): Promise<TurnOutcome> {
  const { runId, serverId, organizationId, place, workflowId } = input;
  if (place !== undefined) {
    const turn = await takeTurnIfFirst(serverId, runId, { place, turn: false });
    if (turn === 'gone') return failUnplaceable(input);
    return turn === 'taken' ? begin(runId, serverId) : { queued: true };
  }
  const taken = await takePlaceAndTurn(new Types.ObjectId(serverId), organizationId, new Types.ObjectId(runId));
  if (!taken) return failUnplaceable(input);
  if (taken.turn && !(await runsAhead(serverId, runId, taken.place))) {
    const begun = await beginPlacedTarget(runId, taken.place, workflowId);
    if (begun) return { turn: true, steps: stepsToRun(begun) };
  } else if (await placeTarget(runId, taken.place, workflowId)) {
    if (taken.turn) await releaseTurn(serverId, new Types.ObjectId(runId));
    return { queued: true };
  }
  // It had a place already (a repeated call) or is no longer queued.
  return fromItsPlace(input, taken.turn);
}
