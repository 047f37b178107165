/*
 * A server's run queue: the order of the runs placed in it, the turn a run asks for when it is
 * placed (`askForTurn`: taken when nothing is ahead of it, and it begins; for a fleet target, its
 * place taken too) and the one the queue workflow gives the next (`nextRun`). It stands on the
 * server's side of the queue (src/domain/servers/run-turn.ts, the only writes of `run_seq` and
 * `turn_run_id`; trigger-places.ts beside it, the places one-server runs take at their trigger) and
 * on the runs store, whose end transitions give the turn back (deployments/turn-release.ts).
 */
export { askForTurn } from './ask';
export { nextRun } from './next';
export { firstPlaced, queuedPlace, runsWaitingOn } from './order';
