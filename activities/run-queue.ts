import type { NextRun, RunPlace, TurnOutcome, TurnRequest } from '../src/domain/contracts/runs';
import { closeRun } from '../src/domain/deployments/runs';
import { askForTurn, nextRun, queuedPlace } from '../src/domain/run-queue';
import { asObjectId } from '../src/domain/ids';

export interface RunQueueActivityDeps {
  /** Wakes a server's run queue (starting it when idle) for a run waiting for its turn there. */
  wakeQueue: (serverId: string, organizationId: string, runId: string) => Promise<void>;
}

/** What a run's end found (runs.runEnded): its server, and the run waiting first in its queue, if the queue must be woken for it. */
type Ended = { serverId: unknown; organizationId: unknown; waiting: unknown } | null;

/** After a run's end: the queue is woken for the run waiting first, when there is one the turn was just given back for. */
export const wakeWaiting = (wakeQueue: RunQueueActivityDeps['wakeQueue']) => async (ended: Ended) => {
  if (ended?.waiting && ended.serverId) await wakeQueue(String(ended.serverId), String(ended.organizationId), String(ended.waiting));
};

/**
 * A server's run queue, as runs and the queue workflow use it (src/domain/run-queue owns its
 * writes): a run asks for its turn; the queue gives it to the next in order. Local activities.
 */
export function createRunQueueActivities({ wakeQueue }: RunQueueActivityDeps) {
  return {
    /**
     * A run asks for its server's turn (`place`: taken by its trigger; absent for a fleet target,
     * placed now, `workflowId` the group's it runs in): it has it and has begun (its steps), or waits
     * and its queue is woken, or failed unrun.
     */
    async takeTurn(input: TurnRequest): Promise<TurnOutcome> {
      const outcome = await askForTurn(input);
      if ('queued' in outcome) await wakeQueue(input.serverId, input.organizationId, input.runId);
      return outcome;
    },

    /**
     * A run waiting for its turn checks in (each minute): false once it no longer waits (cancelled or
     * closed meanwhile); while it does, its queue is woken again, in case a wake was lost.
     */
    async stillWaiting(input: RunPlace): Promise<boolean> {
      if (!(await queuedPlace(input.runId))) return false;
      await wakeQueue(input.serverId, input.organizationId, input.runId);
      return true;
    },

    /**
     * The server's next run, its turn taken: the queued one with the lowest place in the queue. Null
     * when none is queued, or when another run holds the turn (its end wakes the queue).
     */
    nextQueuedRun: ({ serverId }: { serverId: string }): Promise<NextRun | null> => nextRun(serverId),

    /** A queued run whose workflow ended before its turn came (terminated in Temporal): failed, so its queue (and fleet run) move on. */
    async failQueuedRun({ runId, error }: { runId: string; error: string }): Promise<void> {
      await closeRun(asObjectId(runId), 'queued', 'failed', { error });
    },
  };
}

export type RunQueueActivities = ReturnType<typeof createRunQueueActivities>;
