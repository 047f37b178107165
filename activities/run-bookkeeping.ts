import type { Types } from 'mongoose';
import type { BegunRun, FrozenHold, DecidingActor, FleetGate, FleetPlan, FleetTarget, GateDecision, GateDecisionResult, HowRunEnded, OpenedGate, PauseResult, RunStepDefinition } from '../src/domain/contracts/runs';
import * as gates from '../src/domain/deployments/gates';
import * as rollback from '../src/domain/deployments/rollback';
import { fleetPlanOf } from '../src/domain/deployments/fleet-plan';
import { DeploymentRunModel, type RunStatus } from '../src/domain/deployments/model';
import { holdOneServerRun, holdOrThaw, type HoldableRun } from '../src/domain/deployments/freeze-hold';
import { ServerModel } from '../src/domain/servers/model';
import * as runs from '../src/domain/deployments/runs';
import { batchTargets, closeWaitingTargets } from '../src/domain/deployments/targets';
import { asObjectId } from '../src/domain/ids';
import { wakeWaiting, type RunQueueActivityDeps } from './run-queue';

/**
 * A run's bookkeeping as its workflow moves it along — begin, a fleet run's batches, its end — each
 * one transition of the runs store. Local activities: short database work.
 */
/** The servers of a fleet run's batch whose targets have not started (what a freeze would hold). */
async function queuedServersOf(runId: Types.ObjectId, batch: number) {
  const waiting = await DeploymentRunModel.find({ parent_run_id: runId, batch, status: 'queued' }, { server_id: 1 }).lean();
  return ServerModel.find({ _id: { $in: waiting.map((t) => t.server_id) } }, { title: 1, tags: 1 }).lean();
}

export function createRunBookkeepingActivities({ wakeQueue }: RunQueueActivityDeps) {
  const afterEnd = wakeWaiting(wakeQueue);
  return {
    /**
     * queued → running; returns the steps, or null when the run has ended (cancelled while queued).
     * A run already running is this workflow's own, begun before its worker died (a local activity
     * runs again when its workflow task is retried): it carries on.
     */
    async beginRun({ runId }: { runId: string }): Promise<RunStepDefinition[] | null> {
      const run = await runs.beginRun(runId);
      return run && runs.stepsToRun(run);
    },

    /**
     * A one-server run: queued → running as `beginRun`, and then, while change freezes cover its
     * server, running → frozen (unless triggered with an override): the run holds before its first
     * step (a run found frozen was held before its worker died: it holds on).
     */
    async beginOneServerRun({ runId }: { runId: string }): Promise<BegunRun> {
      const run = await runs.beginRun(runId);
      if (!run) return { steps: null, frozen: null };
      return { steps: runs.stepsToRun(run), frozen: await holdOneServerRun(run) };
    },

    /** A fleet run: queued → running, and what its workflow needs to run its batches (or its window); null when it has ended (cancelled while queued). */
    async beginFleet({ runId }: { runId: string }): Promise<FleetPlan | null> {
      const run = await runs.beginRun(runId);
      return run?.fleet ? fleetPlanOf(run.fleet) : null;
    },

    /**
     * running → awaiting_approval at a gate (`openedAt`, `expiresAt`: the workflow's clock, as its
     * timer's): when it expires and how it stands (the first opening's, decided or not, when it was
     * open already); false when the run no longer runs.
     */
    openGate: async ({ runId, gate, openedAt, expiresAt }: { runId: string; gate: FleetGate; openedAt: number; expiresAt: number }): Promise<false | OpenedGate> => {
      const opened = await gates.openGate(runId, { beforeBatch: gate.beforeBatch, ...(gate.beforeTarget ? { beforeTarget: gate.beforeTarget } : {}), approvals: gate.approvals, expiresIn: gate.expiresIn, openedAt: new Date(openedAt), expiresAt: new Date(expiresAt) });
      return opened ? { ...opened, expiresAt: opened.expiresAt.getTime() } : false;
    },

    /** A person's approval or rejection, as the store finds it: recorded (the count, the outcome) or refused with why. */
    recordGateDecision: ({ runId, beforeBatch, decision }: { runId: string; beforeBatch: number; decision: GateDecision }): Promise<GateDecisionResult> => gates.recordDecision(runId, beforeBatch, decision),

    /** The gate's timer fired: expired unless decided first; its outcome as it stands. */
    expireGate: ({ runId, beforeBatch }: { runId: string; beforeBatch: number }) => gates.expireGate(runId, beforeBatch),

    /** An hour before a gate expires, undecided: run.approval_expiring (once). */
    warnGateExpiring: ({ runId, beforeBatch, expiresAt }: { runId: string; beforeBatch: number; expiresAt: number }): Promise<void> => gates.warnGateExpiring(runId, beforeBatch, new Date(expiresAt)),

    /** A halted fleet run's rollback: its rollback runs (created once), newest batch first; null when it has none to run. */
    prepareRollback: ({ runId, reason, requestedBy }: { runId: string; reason: string; requestedBy?: DecidingActor | null }): Promise<rollback.RollbackPlan | null> =>
      rollback.prepareRollback(runId, reason, requestedBy ?? null),

    /** How its rollback runs stand. */
    rollbackProgress: ({ runId }: { runId: string }) => rollback.rollbackProgress(runId),

    /** The rollback's end on the fleet run: its summary line. */
    finishRollback: ({ runId, progress }: { runId: string; progress: { total: number; succeeded: number; failed: string[] } }): Promise<string> => rollback.finishRollback(runId, progress),

    /** A person asked the run to pause after its running batch. */
    requestPause: ({ runId, by, reason }: { runId: string; by: DecidingActor; reason: string }): Promise<PauseResult> => gates.requestPause(runId, by, reason),

    /** Between batches, a pause asked is held: running → paused. */
    holdPaused: ({ runId }: { runId: string }): Promise<boolean> => gates.holdPaused(runId),

    /**
     * Before batch `batch` of a fleet run — or, without `batch`, before a one-server run's first
     * step: change freezes covering its servers hold the run (running → frozen), and a frozen run
     * they no longer cover goes on (frozen → running). What holds it (names, when they lift in ms),
     * or null. A run triggered with a freeze override is never held.
     */
    async holdIfFrozen({ runId, batch }: { runId: string; batch?: number }): Promise<FrozenHold | null> {
      const run = await DeploymentRunModel.findById(runId, { organization_id: 1, freeze_override: 1, status: 1, server_id: 1, parent_run_id: 1, rolls_back: 1 }).lean<HoldableRun>();
      if (batch === undefined) return holdOneServerRun(run);
      return holdOrThaw(run, () => queuedServersOf(run!._id, batch));
    },

    /** A person resumed the run (or withdrew a pause not yet held). */
    resumeRun: ({ runId }: { runId: string }): Promise<PauseResult> => gates.resumeRun(runId),

    /** A batch's targets still waiting to start (a target closed meanwhile, by a cancel, is not). */
    batchTargets: ({ runId, batch }: { runId: string; batch: number }): Promise<FleetTarget[]> => batchTargets(runId, batch),

    /** A fleet run's targets still waiting for their batch (from `fromBatch` on): skipped (too many failures) or cancelled. */
    closeWaitingTargets: ({ runId, to, fromBatch }: { runId: string; to: 'skipped' | 'cancelled'; fromBatch: number }): Promise<number> =>
      closeWaitingTargets(runId, to, fromBatch),

    /** A queued run (before its turn) that will never start: cancelled. */
    async cancelQueuedRun({ runId }: { runId: string }): Promise<void> {
      await runs.closeRun(asObjectId(runId), 'queued', 'cancelled');
    },

    /** A run that beginRun found already ended (cancelled while queued, or closed by a sweep): how it ended. */
    endedRun: ({ runId }: { runId: string }): Promise<HowRunEnded | null> => runs.howRunEnded(runId),

    /** Steps from `from` on that have not run: skipped. */
    async skipSteps({ runId, from }: { runId: string; from: number }): Promise<void> {
      await runs.skipSteps(runId, from);
    },

    /** Only a running run ends here: one the API already closed (its workflow was gone) keeps its status. */
    async finishRun({ runId, status, error }: { runId: string; status: RunStatus; error: string | null }): Promise<void> {
      await afterEnd(await runs.finishRun(runId, status, error));
    },
  };
}

export type RunBookkeepingActivities = ReturnType<typeof createRunBookkeepingActivities>;
