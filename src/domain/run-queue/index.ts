/*
 * A server's run queue, owned here: the places runs take (`triggerPlaces` for one-server runs at
 * their trigger, `askForTurn` for a fleet target when its batch starts), the server's turn (taken
 * by a run with nothing ahead of it, `askForTurn`; given by the queue workflow to the next, `nextRun`)
 * and its release when a run ends (`giveBackTurn`, called by the runs store's end transitions). The
 * server document's `run_seq` and `turn_run_id` are written only here.
 */
export { askForTurn } from './ask';
export { nextRun } from './next';
export { firstPlaced, queuedPlace, runsWaitingOn } from './order';
export { giveBackTurn } from './release';
export { placeOne, ServerNotRunnable, triggerPlaces, type TriggerPlace } from './trigger-places';
