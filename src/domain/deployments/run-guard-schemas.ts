/* What holds a fleet run between batches, as its document records it: its approval gate, a pause, change freezes, a freeze override, and how long it waited. */
import { Schema } from 'mongoose';
import { actorSchema } from '../access/actor';

/** One approval of a gate: who (a person), when, what they said, and the plan they approved. */
const approvalSchema = new Schema(
  {
    by: { type: actorSchema, required: true },
    at: { type: Date, required: true },
    comment: { type: String, default: null },
    plan_hash: { type: String, default: null },
    // The decision's id (GateDecision.id): recorded once, whatever its workflow does again.
    decision_id: { type: String, default: null },
  },
  { _id: false },
);

/**
 * The gate a fleet run waits at (or last waited at): opened by its workflow before batch
 * `before_batch`, decided by people (runs/gates.ts) or by its expiry.
 */
export const gateSchema = new Schema(
  {
    before_batch: { type: Number, required: true },
    // In a rolling window: the target (1-based) it stands before, `before_batch` being that target's group.
    before_target: { type: Number, default: null },
    approvals_required: { type: Number, required: true },
    approvals: { type: [approvalSchema], default: [] },
    opened_at: { type: Date, required: true },
    expires_in: { type: String, required: true },
    expires_at: { type: Date, required: true },
    // null while open; then approved, rejected or expired.
    outcome: { type: String, enum: ['approved', 'rejected', 'expired', null], default: null },
    decided_at: { type: Date, default: null },
    rejected_by: { type: actorSchema, default: null },
    reason: { type: String, default: null },
    rejection_id: { type: String, default: null },
  },
  { _id: false },
);

/** A pause asked of a fleet run: held from the end of its running batch (`paused_at`) until resumed. */
export const pauseSchema = new Schema(
  {
    by: { type: actorSchema, required: true },
    reason: { type: String, required: true },
    requested_at: { type: Date, required: true },
    paused_at: { type: Date, default: null },
  },
  { _id: false },
);

/** A person's override of the change freezes that covered the run's servers when it was triggered. */
export const freezeOverrideSchema = new Schema(
  {
    by: { type: actorSchema, required: true },
    at: { type: Date, required: true },
    reason: { type: String, required: true },
    freezes: { type: [String], default: [] },
  },
  { _id: false },
);

/** The change freezes a fleet run is held by between batches (status frozen), and when they lift as things stood. */
export const runFreezeSchema = new Schema(
  {
    names: { type: [String], default: [] },
    until: { type: Date, required: true },
    since: { type: Date, required: true },
  },
  { _id: false },
);

/** How long a run waited in holds that ended, in milliseconds: at approval gates, paused, frozen (each added as its hold ends; the one going on counts from its gate, pause or freeze). */
export const waitedSchema = new Schema(
  {
    approval: { type: Number, default: 0 },
    pause: { type: Number, default: 0 },
    freeze: { type: Number, default: 0 },
  },
  { _id: false },
);
