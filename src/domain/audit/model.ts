import { model, Schema } from 'mongoose';

/*
 * The audit trail's collections. `audit_pending` is the outbox: an entry is written there before the
 * change it records (an intent), completed with its outcome, and moved into `audit` by the one chainer
 * (src/domain/audit/chainer.ts), which gives it its place in the organization's hash chain. `audit` is
 * append-only: nothing updates or deletes an entry but retention's pruning (trail.ts).
 */

/** Who did it: a person or service account (with its token or console session), a schedule, or Bosun itself. */
export interface AuditActor {
  type: 'person' | 'service_account' | 'schedule' | 'system';
  id: string | null;
  name: string;
  token_id?: string | null;
  session_id?: string | null;
  /** A schedule's tick: the service account it runs as. */
  run_as?: { id: string; name: string } | null;
}

export interface AuditTarget {
  kind: string;
  id: string | null;
  name?: string | null;
}

/** Where an entry stands: written before its change (`pending`), or its outcome (`ok`, an error code, `unknown`). */
export type AuditOutcome = string;

/** What every entry holds besides its place in the chain. */
export interface AuditFields {
  organization_id: string;
  at: Date;
  actor: AuditActor;
  source_address: string | null;
  action: string;
  target: AuditTarget;
  /** The server the entry is about, when there is one (a command's, a server route's): `?server=` filters on it. */
  server_id: string | null;
  outcome: AuditOutcome;
  details: Record<string, unknown>;
}

const mixed = { type: Schema.Types.Mixed };

/** What an entry is, in the outbox and in the trail alike. */
const entryFields = {
  _id: { type: String, required: true },
  organization_id: { type: String, required: true },
  at: { type: Date, required: true },
  actor: mixed,
  source_address: { type: String, default: null },
  action: { type: String, required: true },
  target: mixed,
  server_id: { type: String, default: null },
  outcome: { type: String, required: true },
  details: mixed,
};

const pendingSchema = new Schema(
  {
    ...entryFields,
    /** When the chainer may take it: its outcome's time, or (while pending) when it counts as `unknown`. */
    ready_at: { type: Date, required: true, index: true },
  },
  { collection: 'audit_pending', versionKey: false, minimize: false },
);

export const AuditPendingModel = model('AuditPending', pendingSchema);

const entrySchema = new Schema(
  {
    /** `_id`: the outbox entry's id: chained once, however often the chainer is interrupted. */
    ...entryFields,
    seq: { type: Number, required: true },
    prev_hash: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { collection: 'audit', versionKey: false, minimize: false },
);
// One chain per organization: two chainers can never both write seq n (the chain cannot fork).
// Few indexes, as each costs every step's command a write: filters by actor and action walk the
// organization's chain newest first (its seq index); by server and by time they have their own.
entrySchema.index({ organization_id: 1, seq: 1 }, { unique: true });
entrySchema.index({ organization_id: 1, server_id: 1, seq: -1 });
entrySchema.index({ organization_id: 1, at: 1 });

export const AuditEntryModel = model('AuditEntry', entrySchema);
export type AuditEntry = AuditFields & { _id: string; seq: number; prev_hash: string; hash: string };

/** Where an organization's chain restarts after retention pruned its oldest entries: the last pruned entry. */
const anchorSchema = new Schema(
  {
    organization_id: { type: String, required: true, unique: true },
    seq: { type: Number, required: true },
    hash: { type: String, required: true },
    pruned_at: { type: Date, required: true },
  },
  { collection: 'audit_anchors', versionKey: false },
);
export const AuditAnchorModel = model('AuditAnchor', anchorSchema);

/** An organization's head (seq, hash) as recorded every AUDIT_CHECKPOINT_MINUTES, logged and published. */
const checkpointSchema = new Schema(
  {
    organization_id: { type: String, required: true },
    seq: { type: Number, required: true },
    hash: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'audit_checkpoints', versionKey: false },
);
checkpointSchema.index({ organization_id: 1, seq: -1 });
export const AuditCheckpointModel = model('AuditCheckpoint', checkpointSchema);
