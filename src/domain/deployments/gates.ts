import { Types } from 'mongoose';
import { gateRejection, type DecidingActor, type GateDecision, type GateDecisionResult, type PauseResult, type StoredGateOutcome } from '../contracts/runs';
import { asChange } from '../execution/steps';
import { DeploymentRunModel, type DeploymentRun } from './model';
import { inTransaction } from '../database';
import { recordRunEvent } from './notification-events';
import { recordRunDecision } from '../audit/system-decisions';

/*
 * A fleet run's guards between batches, part of the runs store: its approval gate (opened by its
 * workflow, decided by people or by expiry) and its pause (asked by a person, held from the end of
 * the running batch, resumed). Each write checks the state it leaves and advances the run's event
 * sequence once. The workflow calls these (its update handlers for people's decisions): one owner.
 */

const storedActor = (actor: DecidingActor) => ({ type: actor.type, id: new Types.ObjectId(actor.id), name: actor.name, token_id: actor.token_id ? new Types.ObjectId(actor.token_id) : null });

/** A hold's end, in an update pipeline: the run's waits of `kind` plus the time since `since` (a field of the run, as it was before the update). */
const waitedUntil = (kind: 'approval' | 'pause' | 'freeze', since: string, now: Date) => ({ $add: [{ $ifNull: [`$waited.${kind}`, 0] }, { $subtract: [now, since] }] });

export interface OpeningGate {
  beforeBatch: number;
  /** In a rolling window: the target it stands before. */
  beforeTarget?: number;
  approvals: number;
  expiresIn: string;
  /** The workflow's clock: its timer and this agree. */
  openedAt: Date;
  expiresAt: Date;
}

/**
 * running → awaiting_approval at a gate: when it expires, and its outcome. A gate is opened once:
 * a repeat (the workflow's task done again after a worker died, or the run continued as new before
 * the batch) finds it as first opened, with its expiry and whatever people decided meanwhile — never
 * opened afresh. Null when the run no longer runs.
 */
export async function openGate(runId: string, gate: OpeningGate): Promise<{ expiresAt: Date; outcome: StoredGateOutcome; rejection: string | null } | null> {
  // The gate and its notification event, in one transaction.
  const opened = await inTransaction(async (session) => {
    const written = await DeploymentRunModel.updateOne(
      { _id: runId, status: 'running', 'gate.before_batch': { $ne: gate.beforeBatch } },
      asChange({
        $set: {
          status: 'awaiting_approval',
          gate: { before_batch: gate.beforeBatch, ...(gate.beforeTarget ? { before_target: gate.beforeTarget } : {}), approvals_required: gate.approvals, approvals: [], opened_at: gate.openedAt, expires_in: gate.expiresIn, expires_at: gate.expiresAt, outcome: null },
        },
      }),
      { session },
    );
    if (written.modifiedCount) await recordRunEvent(runId, 'run.awaiting_approval', { session, key: `run.awaiting_approval:${runId}:${gate.beforeBatch}` });
    return written;
  });
  if (opened.modifiedCount) return { expiresAt: gate.expiresAt, outcome: null, rejection: null };
  // Opened already: as it was opened then, decided or not (an approval may have come, and made the
  // run running again, before the repeat; a frozen run continued as new comes back to its gate).
  const open = await DeploymentRunModel.findOne(
    { _id: runId, status: { $in: ['awaiting_approval', 'running', 'frozen'] }, 'gate.before_batch': gate.beforeBatch },
    { 'gate.expires_at': 1, 'gate.outcome': 1, 'gate.rejected_by': 1, 'gate.reason': 1 },
  ).lean();
  if (!open?.gate) return null;
  const { expires_at: expiresAt, outcome, rejected_by: rejectedBy, reason } = open.gate;
  return { expiresAt, outcome: (outcome as StoredGateOutcome | undefined) ?? null, rejection: rejectedBy ? gateRejection(rejectedBy.name, reason ?? '') : null };
}

type GateHolder = Pick<DeploymentRun, 'status' | 'gate' | 'actor'>;

/**
 * Why a person's decision on a run's gate cannot be recorded, or null when it can: the one rule,
 * which the API asks before it passes a decision on and the store's writes hold to. An approval:
 * the run waits at an open gate (`beforeBatch`: that gate; null: whichever it waits at) that has not
 * expired, the person did not trigger the run nor approve this gate already. A rejection: the same,
 * bar the first two (one may stop one's own run).
 */
export function gateRefusal(run: GateHolder | null, kind: GateDecision['kind'], by: Pick<DecidingActor, 'id' | 'name'>, now: Date, beforeBatch: number | null = null): Extract<GateDecisionResult, { refused: unknown }> | null {
  const gate = run?.gate;
  const thisGate = gate && (beforeBatch === null || gate.before_batch === beforeBatch);
  if (thisGate && (gate.outcome === 'expired' || (gate.outcome === null && gate.expires_at <= now))) {
    return { refused: 'expired', message: `The approval gate expired at ${gate.expires_at.toISOString()} (after ${gate.expires_in})` };
  }
  if (run?.status !== 'awaiting_approval' || !thisGate || gate.outcome !== null) {
    return { refused: 'not_awaiting_approval', message: `The run is not awaiting approval (it is ${run?.status ?? 'gone'})` };
  }
  if (kind === 'reject') return null;
  if (run.actor && run.actor.id.toString() === by.id) return { refused: 'self_approval', message: `${by.name} triggered this run and cannot approve it: another person must` };
  if (gate.approvals.some((a) => a.by.id.toString() === by.id)) return { refused: 'already_approved', message: `${by.name} has already approved this gate` };
  return null;
}

/**
 * Why a decision the store did not record was refused, from the run as it is now — unless this very
 * decision (`decisionId`) is recorded already: its workflow's handler ran again after a worker died,
 * and the decision stands as recorded then (the gate as it stands now).
 */
async function whyRefused(runId: string, beforeBatch: number, kind: GateDecision['kind'], by: DecidingActor, now: Date, decisionId: string | null): Promise<GateDecisionResult> {
  const run = await DeploymentRunModel.findById(runId, { status: 1, gate: 1, actor: 1 }).lean<GateHolder>();
  const gate = run?.gate;
  if (decisionId !== null && gate?.before_batch === beforeBatch && (gate.rejection_id === decisionId || gate.approvals.some((a) => a.decision_id === decisionId))) {
    return { recorded: true, approvals: gate.approvals.length, outcome: gate.outcome === 'approved' || gate.outcome === 'rejected' ? gate.outcome : null };
  }
  return gateRefusal(run, kind, by, now, beforeBatch) ?? { refused: 'not_awaiting_approval', message: 'The run is not awaiting approval' };
}

/**
 * One person's approval of the gate a run waits at, in one write: refused when the run does not wait
 * there, the gate has expired, the person triggered the run or approved already. The approval that
 * makes the count decides the gate: approved, and the run running again.
 */
export async function approveGate(runId: string, beforeBatch: number, by: DecidingActor, comment: string | null, now = new Date(), decisionId: string | null = null): Promise<GateDecisionResult> {
  // The plan approved is the run's own, read in the same write.
  const approval = { by: { $literal: storedActor(by) }, at: { $literal: now }, comment: { $literal: comment }, plan_hash: { $ifNull: ['$plan_hash', null] }, decision_id: { $literal: decisionId } };
  const enough = { $gte: [{ $size: '$gate.approvals' }, '$gate.approvals_required'] };
  const updated = await DeploymentRunModel.findOneAndUpdate(
    {
      _id: runId,
      status: 'awaiting_approval',
      'gate.before_batch': beforeBatch,
      'gate.outcome': null,
      'gate.expires_at': { $gt: now },
      // Compared as strings: a trigger stores its actor as given (the id a string), an approval as an ObjectId.
      $expr: {
        $and: [
          { $ne: [{ $toString: '$actor.id' }, by.id] },
          { $not: [{ $in: [by.id, { $map: { input: '$gate.approvals', in: { $toString: '$$this.by.id' } } }] }] },
        ],
      },
    },
    [
      { $set: { 'gate.approvals': { $concatArrays: ['$gate.approvals', [approval]] }, seq: { $add: ['$seq', 1] }, updatedAt: now } },
      {
        $set: {
          'gate.outcome': { $cond: [enough, 'approved', null] },
          'gate.decided_at': { $cond: [enough, now, null] },
          status: { $cond: [enough, 'running', '$status'] },
          'waited.approval': { $cond: [enough, waitedUntil('approval', '$gate.opened_at', now), { $ifNull: ['$waited.approval', 0] }] },
        },
      },
    ],
    { returnDocument: 'after', projection: { gate: 1 }, updatePipeline: true },
  ).lean();
  if (!updated?.gate) return whyRefused(runId, beforeBatch, 'approve', by, now, decisionId);
  return { recorded: true, approvals: updated.gate.approvals.length, outcome: updated.gate.outcome === 'approved' ? 'approved' : null };
}

/** A person's rejection of the gate a run waits at: the gate rejected (the workflow then fails the run). Refused as an approval is, bar self-approval (one may stop one's own run). */
export async function rejectGate(runId: string, beforeBatch: number, by: DecidingActor, reason: string, now = new Date(), decisionId: string | null = null): Promise<GateDecisionResult> {
  const rejected = { 'gate.outcome': 'rejected', 'gate.decided_at': now, 'gate.rejected_by': { $literal: storedActor(by) }, 'gate.reason': { $literal: reason }, 'gate.rejection_id': { $literal: decisionId } };
  const updated = await DeploymentRunModel.findOneAndUpdate(
    { _id: runId, status: 'awaiting_approval', 'gate.before_batch': beforeBatch, 'gate.outcome': null, 'gate.expires_at': { $gt: now } },
    [{ $set: { ...rejected, 'waited.approval': waitedUntil('approval', '$gate.opened_at', now), seq: { $add: ['$seq', 1] }, updatedAt: now } }],
    { returnDocument: 'after', projection: { gate: 1 }, updatePipeline: true },
  ).lean();
  if (!updated?.gate) return whyRefused(runId, beforeBatch, 'reject', by, now, decisionId);
  return { recorded: true, approvals: updated.gate.approvals.length, outcome: 'rejected' };
}

/** A person's decision, from the run's workflow: recorded once (by its id), or refused with why. */
export const recordDecision = (runId: string, beforeBatch: number, decision: GateDecision, now = new Date()): Promise<GateDecisionResult> =>
  decision.kind === 'approve'
    ? approveGate(runId, beforeBatch, decision.by, decision.comment, now, decision.id ?? null)
    : rejectGate(runId, beforeBatch, decision.by, decision.reason, now, decision.id ?? null);

/**
 * The gate's time is up (the workflow's timer): expired, unless people decided it first. The
 * gate's outcome as it stands after.
 */
export async function expireGate(runId: string, beforeBatch: number, now = new Date()): Promise<StoredGateOutcome> {
  // The expiry and its entry in the trail (Bosun's decision: the run fails), in one transaction.
  await inTransaction(async (session) => {
    const expired = await DeploymentRunModel.findOneAndUpdate(
      { _id: runId, 'gate.before_batch': beforeBatch, 'gate.outcome': null },
      [{ $set: { 'gate.outcome': 'expired', 'gate.decided_at': now, 'waited.approval': waitedUntil('approval', '$gate.opened_at', now), seq: { $add: ['$seq', 1] }, updatedAt: now } }],
      { session, projection: { organization_id: 1, server_id: 1, gate: 1 }, updatePipeline: true },
    ).lean();
    if (!expired?.gate) return;
    const { expires_in: expiresIn, expires_at: expiresAt } = expired.gate;
    const details = { before_batch: beforeBatch, expires_in: expiresIn, expires_at: expiresAt.toISOString(), error: `approval expired after ${expiresIn}` };
    await recordRunDecision(expired, { by: 'approval gate', action: 'run.expire_gate', details }, session);
  });
  const run = await DeploymentRunModel.findById(runId, { gate: 1 }).lean();
  return (run?.gate?.outcome as StoredGateOutcome | undefined) ?? null;
}

/**
 * An hour before a gate expires (the workflow's timer): run.approval_expiring, once, when the run
 * still waits at that gate undecided. The event is the whole record: the run does not change.
 */
export async function warnGateExpiring(runId: string, beforeBatch: number, expiresAt: Date): Promise<void> {
  const waiting = await DeploymentRunModel.exists({ _id: runId, status: 'awaiting_approval', 'gate.before_batch': beforeBatch, 'gate.outcome': null });
  if (!waiting) return;
  await recordRunEvent(runId, 'run.approval_expiring', { key: `run.approval_expiring:${runId}:${beforeBatch}`, extra: { expires_at: expiresAt.toISOString() } });
}

/** A pause asked of a running fleet run (the batch running finishes first). Refused when the run is not running, or a pause is already asked. */
export async function requestPause(runId: string, by: DecidingActor, reason: string, now = new Date()): Promise<PauseResult> {
  const asked = await DeploymentRunModel.updateOne(
    { _id: runId, status: 'running', fleet: { $ne: null }, pause: null },
    asChange({ $set: { pause: { by: storedActor(by), reason, requested_at: now, paused_at: null } } }),
  );
  if (asked.modifiedCount) return { recorded: true };
  const run = await DeploymentRunModel.findById(runId, { status: 1, pause: 1 }).lean();
  if (run?.pause) return { refused: 'not_running', message: `The run is already ${run.status === 'paused' ? 'paused' : 'pausing'} (asked by ${run.pause.by.name})`, pause_asked: true };
  return { refused: 'not_running', message: `Only a running run can be paused (it is ${run?.status ?? 'gone'})`, pause_asked: false };
}

/** Between batches, a pause asked: running → paused. False when none was asked (or the run is no longer running). */
export async function holdPaused(runId: string, now = new Date()): Promise<boolean> {
  const held = await inTransaction(async (session) => {
    const written = await DeploymentRunModel.updateOne({ _id: runId, status: 'running', pause: { $ne: null }, 'pause.paused_at': null }, asChange({ $set: { status: 'paused', 'pause.paused_at': now } }), { session });
    if (written.modifiedCount) await recordRunEvent(runId, 'run.paused', { session });
    return written;
  });
  if (held.modifiedCount) return true;
  return (await DeploymentRunModel.exists({ _id: runId, status: 'paused' })) !== null;
}

/** A resume: a paused run running again, or a pause asked but not yet held withdrawn. Refused when there is no pause. */
export async function resumeRun(runId: string, now = new Date()): Promise<PauseResult> {
  const paused = { $eq: ['$status', 'paused'] };
  const resumed = await DeploymentRunModel.updateOne(
    { _id: runId, status: { $in: ['running', 'paused'] }, pause: { $ne: null } },
    [
      {
        $set: {
          status: { $cond: [paused, 'running', '$status'] },
          pause: null,
          'waited.pause': { $cond: [paused, waitedUntil('pause', '$pause.paused_at', now), { $ifNull: ['$waited.pause', 0] }] },
          seq: { $add: ['$seq', 1] },
          updatedAt: now,
        },
      },
    ],
    { updatePipeline: true },
  );
  if (resumed.modifiedCount) return { recorded: true };
  const run = await DeploymentRunModel.findById(runId, { status: 1, pause: 1 }).lean();
  return { refused: 'not_paused', message: `The run is not paused (it is ${run?.status ?? 'gone'})`, pause_asked: !!run?.pause };
}

/**
 * Between batches, change freezes cover the next batch's servers: running → frozen, with their
 * names and when they lift (a frozen run's are brought up to date, its `since` kept). False when
 * the run is neither running nor frozen (cancelled meanwhile).
 */
export async function holdFrozen(runId: string, names: string[], until: Date, now = new Date()): Promise<boolean> {
  // The hold and its entry in the trail (Bosun's decision), in one transaction.
  const held = await inTransaction(async (session) => {
    const run = await DeploymentRunModel.findOneAndUpdate(
      { _id: runId, status: 'running' },
      asChange({ $set: { status: 'frozen', freeze: { names, until, since: now } } }),
      { session, projection: { organization_id: 1, server_id: 1 } },
    ).lean();
    if (run) await recordRunDecision(run, { by: 'change freeze', action: 'run.hold_frozen', details: { freezes: names, until: until.toISOString() } }, session);
    return run !== null;
  });
  if (held) return true;
  // Already frozen: a change (a freeze extended, another begun) is one event; the same freezes none.
  const changed = await DeploymentRunModel.updateOne(
    { _id: runId, status: 'frozen', $or: [{ 'freeze.until': { $ne: until } }, { 'freeze.names': { $ne: names } }] },
    asChange({ $set: { 'freeze.names': names, 'freeze.until': until } }),
  );
  if (changed.modifiedCount) return true;
  return (await DeploymentRunModel.exists({ _id: runId, status: 'frozen' })) !== null;
}

/** The freezes that held a run lifted (ended, edited or deleted): frozen → running. Nothing for a run not frozen. */
export async function thawRun(runId: string, now = new Date()): Promise<void> {
  // The release and its entry in the trail, in one transaction.
  await inTransaction(async (session) => {
    const run = await DeploymentRunModel.findOneAndUpdate(
      { _id: runId, status: 'frozen' },
      [{ $set: { status: 'running', freeze: null, 'waited.freeze': waitedUntil('freeze', '$freeze.since', now), seq: { $add: ['$seq', 1] }, updatedAt: now } }],
      { session, projection: { organization_id: 1, server_id: 1, freeze: 1 }, updatePipeline: true },
    ).lean();
    if (run) await recordRunDecision(run, { by: 'change freeze', action: 'run.release_frozen', details: { freezes: run.freeze?.names ?? [] } }, session);
  });
}
