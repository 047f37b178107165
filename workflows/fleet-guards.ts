import { condition, defineSignal, defineUpdate, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { gateRejection, type FleetGate, type FrozenHold, type GateDecision, type GateDecisionResult, type OpenedGate, type PauseRequest, type PauseResult } from '../src/domain/contracts/runs';
import { FREEZES_CHANGED_SIGNAL, GATE_DECISION_UPDATE, PAUSE_UPDATE, RESUME_UPDATE } from '../src/domain/contracts/workflow-ids';
import { isPatched, PATCHES } from './patches';
import { bookkeeping } from './run-activities';

/** A person's approval or rejection of the gate the run waits at; refused at once (not recorded) when it waits at none. */
export const gateDecisionUpdate = defineUpdate<GateDecisionResult, [GateDecision]>(GATE_DECISION_UPDATE);
/** Pause after the running batch; resume. */
export const pauseUpdate = defineUpdate<PauseResult, [PauseRequest]>(PAUSE_UPDATE);
export const resumeUpdate = defineUpdate<PauseResult, [PauseRequest]>(RESUME_UPDATE);

/** A freeze was edited or deleted: a frozen run checks again at once. */
export const freezesChangedSignal = defineSignal(FREEZES_CHANGED_SIGNAL);

/** A frozen run checks its freezes again at least this often (one may be edited or deleted without a signal arriving). */
export const FREEZE_RECHECK_MS = 2 * 60_000;

/**
 * A frozen run's wait before it asks again: until a second past the freeze's end (its window is
 * over by then), at most `recheckMs`, or until `changed` (a freeze edited or deleted). Durable.
 */
export const untilFreezeMayLift = (frozen: FrozenHold, recheckMs: number, changed: () => boolean) =>
  condition(changed, Math.max(1000, Math.min(frozen.until - Date.now() + 1000, recheckMs)));

/** How long a decision waits for the run to reach the gate the store has open (see the update's handler). */
const GATE_CATCH_UP = '15 seconds';

/** A gate as openGate answers it: in histories of before, `true` or without its outcome. */
type StoredGate = Pick<OpenedGate, 'expiresAt'> & Partial<OpenedGate>;

/** How a gate ended: approved (the run goes on), or why not, in the run's error. */
export type GateEnd = { approved: true } | { approved: false; error: string };

interface OpenGate {
  gate: FleetGate;
  approvers: string[];
  outcome: 'approved' | 'rejected' | null;
  rejection: string | null;
}

/** How long before a gate expires its run tells of it (run.approval_expiring). */
const EXPIRY_WARNING_MS = 3600_000;

/**
 * Waits for people's decision until the gate expires: true when decided. A gate open longer than
 * the warning tells of its expiry an hour before (a durable timer; the event is recorded once).
 */
async function waitForDecision(runId: string, beforeBatch: number, decided: () => boolean, expiresAt: number): Promise<boolean> {
  const left = Math.max(1, expiresAt - Date.now());
  if (left <= EXPIRY_WARNING_MS || !isPatched(PATCHES.gateExpiryWarning)) return condition(decided, left);
  if (await condition(decided, left - EXPIRY_WARNING_MS)) return true;
  await bookkeeping.warnGateExpiring({ runId, beforeBatch, expiresAt });
  return condition(decided, Math.max(1, expiresAt - Date.now()));
}

const approvalsText = (open: OpenGate) =>
  `waiting for ${open.gate.approvals} approval${open.gate.approvals > 1 ? 's' : ''} before ${open.gate.beforeTarget ? `target ${open.gate.beforeTarget}` : `batch ${open.gate.beforeBatch}`} (${open.approvers.length} given${open.approvers.length ? `: ${open.approvers.join(', ')}` : ''})`;

/**
 * A fleet run's guards between batches: its approval gates and its pause. People's decisions arrive
 * as updates; each is recorded by the runs store (which refuses what it must: a second approval,
 * the triggerer's own, one after expiry) before the workflow acts on it. Waits are durable: a gate
 * waits on a timer of its `expires_in`, a pause until a resume, through any restart.
 */
export function fleetGuards(runId: string, pauseAskedBefore: boolean) {
  let open: OpenGate | null = null;
  let pauseAsked = pauseAskedBefore;
  let freezesChanged = false;

  setHandler(
    gateDecisionUpdate,
    async (decision) => {
      // The store opens a gate a moment before the workflow holds it open, and after a worker's death
      // the workflow does again what led it there: a decision the store already takes waits for it.
      if (!open) await condition(() => open !== null, GATE_CATCH_UP);
      const waiting = open;
      if (!waiting || waiting.outcome) return { refused: 'not_awaiting_approval', message: 'The run is not awaiting approval' };
      const result = await bookkeeping.recordGateDecision({ runId, beforeBatch: waiting.gate.beforeBatch, decision });
      if ('recorded' in result) {
        if (decision.kind === 'approve') waiting.approvers.push(decision.by.name);
        else waiting.rejection = gateRejection(decision.by.name, decision.reason);
        waiting.outcome = result.outcome;
        if (!waiting.outcome) setCurrentDetails(approvalsText(waiting));
      }
      return result;
    },
    {
      validator: (_decision: GateDecision) => {
        if (open?.outcome) throw new Error('The run is not awaiting approval');
      },
    },
  );
  /** A refused pause or resume: the store's pause stands (one recorded before a worker died is not lost; none in histories of before). */
  const asStored = (result: PauseResult) => {
    if ('refused' in result && result.pause_asked !== undefined) pauseAsked = result.pause_asked;
    return result;
  };
  setHandler(pauseUpdate, async (request) => {
    const result = await bookkeeping.requestPause({ runId, by: request.by, reason: request.reason });
    if ('recorded' in result) pauseAsked = true;
    return asStored(result);
  });
  setHandler(freezesChangedSignal, () => {
    freezesChanged = true;
  });
  setHandler(resumeUpdate, async () => {
    const result = await bookkeeping.resumeRun({ runId });
    if ('recorded' in result) pauseAsked = false;
    return asStored(result);
  });

  return {
    /** A pause asked and not yet resumed (carried over a continue-as-new). */
    pauseAsked: () => pauseAsked,

    /** Before batch `batch`: a pause asked is held here until a person resumes the run. */
    async holdIfPaused(batch: number, batches: number): Promise<void> {
      if (!pauseAsked) return;
      if (!(await bookkeeping.holdPaused({ runId }))) return;
      setCurrentDetails(`paused before batch ${batch}/${batches}: waiting for a person to resume it`);
      await condition(() => !pauseAsked);
    },

    /**
     * Before batch `batch`: while change freezes cover its servers the run holds (status frozen),
     * checking again when they should lift, at least every FREEZE_RECHECK_MS, and at once when a
     * freeze changes. A durable wait: a cancel ends it. 'continue' when the history grew too long
     * while it waited (`historyFull`): the run continues as new before this batch and waits on.
     */
    async holdWhileFrozen(batch: number, batches: number, historyFull: () => boolean): Promise<'go' | 'continue'> {
      for (;;) {
        const frozen = await bookkeeping.holdIfFrozen({ runId, batch });
        if (!frozen) return 'go';
        setCurrentDetails(`frozen by ${frozen.names.join(', ')} until ${new Date(frozen.until).toISOString()}: batch ${batch}/${batches} waits`);
        freezesChanged = false;
        await untilFreezeMayLift(frozen, FREEZE_RECHECK_MS, () => freezesChanged);
        if (historyFull()) return 'continue';
      }
    },

    /** Waits at a gate until enough people approved, one rejected, or its time ran out. */
    async awaitGate(gate: FleetGate): Promise<GateEnd> {
      const openedAt = Date.now();
      const waiting: OpenGate = { gate, approvers: [], outcome: null, rejection: null };
      // Open to decisions before the store opens the gate: after a worker's death the gate's opening
      // is done again, and a decision the store already takes must not be refused meanwhile.
      open = waiting;
      try {
        const opened = (await bookkeeping.openGate({ runId, gate, openedAt, expiresAt: openedAt + gate.expiresInMs })) as boolean | StoredGate;
        if (!opened) return { approved: false, error: 'the run stopped before its approval gate' };
        // The gate as the store holds it (`true`, or no outcome, in histories of before): opened again, it
        // keeps its first expiry, and what people decided meanwhile stands (the store is the record).
        const held: StoredGate = opened === true ? { expiresAt: openedAt + gate.expiresInMs } : opened;
        const { expiresAt } = held;
        const stored = held.outcome ?? null;
        waiting.rejection ??= held.rejection ?? null;
        setCurrentDetails(`${approvalsText(waiting)}; expires at ${new Date(expiresAt).toISOString()}`);
        const decided = stored !== null || (await waitForDecision(runId, gate.beforeBatch, () => waiting.outcome !== null, expiresAt));
        // Time is up: expired, unless people decided it first (the store knows which came first).
        const outcome = decided ? (stored ?? waiting.outcome) : await bookkeeping.expireGate({ runId, beforeBatch: gate.beforeBatch });
        if (outcome === 'approved') return { approved: true };
        if (outcome === 'rejected') return { approved: false, error: waiting.rejection ?? 'approval rejected' };
        return { approved: false, error: `approval expired after ${gate.expiresIn}` };
      } finally {
        open = null;
      }
    },
  };
}
