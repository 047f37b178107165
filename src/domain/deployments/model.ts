import { actorSchema } from '../access/actor';
import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { executionFields, lastChunkField } from '../execution/fields';

/**
 * A run's statuses. `awaiting_approval`, `paused` and `frozen` are a fleet run's, between batches:
 * it has begun (like `running`) and holds no server while it waits for people (or, frozen, for a
 * change freeze to lift). A one-server run whose turn came during a freeze is `frozen` too, before
 * its first step (holding its server's turn).
 */
export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'paused', 'frozen', 'success', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['success', 'failed', 'cancelled'];
/** A run that has begun and not ended: running, or (a fleet run) waiting between batches. */
export const BEGUN_RUN_STATUSES = ['running', 'awaiting_approval', 'paused', 'frozen'] as const;
export type BegunRunStatus = (typeof BEGUN_RUN_STATUSES)[number];
/** Every status of a run that has not ended. */
export const UNFINISHED_RUN_STATUSES = ['queued', ...BEGUN_RUN_STATUSES] as const;
export const STEP_STATUSES = ['pending', 'running', 'success', 'failed', 'skipped', 'cancelled'] as const;
/** A fleet run's target: a run's statuses, or skipped (its batch never started, or a retry found nothing left to do). */
export const TARGET_STATUSES = [...RUN_STATUSES, 'skipped'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];

const stepDefinitionSchema = new Schema(
  {
    name: { type: String, required: true },
    command: { type: String, required: true },
    timeout_seconds: { type: Number, default: null },
    retries: { type: Number, default: 0 },
    continue_on_error: { type: Boolean, default: false },
  },
  { _id: false },
);

const parameterDefinitionSchema = new Schema(
  {
    name: { type: String, required: true },
    description: { type: String, default: null },
    default: { type: String, default: null },
    required: { type: Boolean, default: false },
    secret: { type: Boolean, default: false },
    pattern: { type: String, default: null },
  },
  { _id: false },
);

/** `batch_size` / `max_failures`: a count, or a percentage of the targets as a string ("25%"); null: the default. */
const strategySchema = new Schema(
  {
    batch_size: { type: Schema.Types.Mixed, default: null },
    max_failures: { type: Schema.Types.Mixed, default: null },
    // Approval gates: before batch `before_batch`, `approvals` distinct people approve within `expires_in`.
    gates: {
      type: [new Schema({ before_batch: { type: Number, required: true }, approvals: { type: Number, required: true }, expires_in: { type: String, required: true } }, { _id: false })],
      default: undefined,
    },
    // Run on each target of a batch once its steps succeeded (after `soak_seconds`): see api/deployments/schemas.ts.
    health_check: {
      type: new Schema(
        {
          command: { type: String, required: true },
          soak_seconds: { type: Number, default: 0 },
          timeout_seconds: { type: Number, default: 10 },
          retries: { type: Number, default: 0 },
          interval_seconds: { type: Number, default: 5 },
        },
        { _id: false },
      ),
      default: undefined,
    },
  },
  { _id: false },
);

/** One attempt of a target's health check. */
const healthAttemptSchema = new Schema(
  {
    attempt: { type: Number, required: true },
    at: { type: Date, required: true },
    exit_code: { type: Number, default: null },
    timed_out: { type: Boolean, default: false },
    // The end of what it printed (or why it could not run), capped.
    output: { type: String, default: '' },
  },
  { _id: false },
);

/** A fleet target's health check, after its batch: its attempts and how it ended. */
const healthSchema = new Schema(
  {
    status: { type: String, enum: ['running', 'success', 'failed'], required: true },
    command: { type: String, required: true },
    attempts: { type: [healthAttemptSchema], default: [] },
    started_at: { type: Date, required: true },
    completed_at: { type: Date, default: null },
  },
  { _id: false },
);

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
const gateSchema = new Schema(
  {
    before_batch: { type: Number, required: true },
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
const pauseSchema = new Schema(
  {
    by: { type: actorSchema, required: true },
    reason: { type: String, required: true },
    requested_at: { type: Date, required: true },
    paused_at: { type: Date, default: null },
  },
  { _id: false },
);

/** A person's override of the change freezes that covered the run's servers when it was triggered. */
const freezeOverrideSchema = new Schema(
  {
    by: { type: actorSchema, required: true },
    at: { type: Date, required: true },
    reason: { type: String, required: true },
    freezes: { type: [String], default: [] },
  },
  { _id: false },
);

/** The change freezes a fleet run is held by between batches (status frozen), and when they lift as things stood. */
const runFreezeSchema = new Schema(
  {
    names: { type: [String], default: [] },
    until: { type: Date, required: true },
    since: { type: Date, required: true },
  },
  { _id: false },
);

const rollbackDefinitionSchema = new Schema(
  {
    steps: { type: [stepDefinitionSchema], required: true },
    automatic: { type: Boolean, default: true },
  },
  { _id: false },
);

const deploymentSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    // One server (a one-server run), or `targets` (a fleet run): exactly one of the two is set.
    server_id: { type: Schema.Types.ObjectId, ref: 'Server', default: null, index: true },
    targets: {
      type: new Schema({ server_ids: { type: [Schema.Types.ObjectId], default: [] }, tags: { type: [String], default: [] } }, { _id: false }),
      default: null,
    },
    strategy: { type: strategySchema, default: null },
    // Steps that undo a halted fleet run on every server it touched (automatic: at once; else on request).
    rollback: { type: rollbackDefinitionSchema, default: null },
    parameters: { type: [parameterDefinitionSchema], default: [] },
    name: { type: String, required: true },
    steps: { type: [stepDefinitionSchema], required: true },
    last_run_at: { type: Date, default: null },
    last_run_status: { type: String, enum: [...RUN_STATUSES, null], default: null },
  },
  { timestamps: true },
);
deploymentSchema.index({ organization_id: 1, name: 1 }, { unique: true });

export type Deployment = InferSchemaType<typeof deploymentSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export const DeploymentModel = model('Deployment', deploymentSchema);

const runStepSchema = new Schema(
  {
    name: { type: String, required: true },
    command: { type: String, required: true },
    timeout_seconds: { type: Number, default: null },
    retries: { type: Number, default: 0 },
    continue_on_error: { type: Boolean, default: false },
    status: { type: String, enum: STEP_STATUSES, required: true, default: 'pending' },
    ...executionFields,
  },
  { _id: false },
);

/** A parameter a run was triggered with: a secret one's value only sealed (AES-GCM), never in clear. */
export const runParameterSchema = new Schema(
  {
    name: { type: String, required: true },
    secret: { type: Boolean, default: false },
    value: { type: String, default: null },
    sealed: { type: String, default: null },
  },
  { _id: false },
);

/** A fleet run's strategy, resolved against its targets when it was triggered. */
const fleetSchema = new Schema(
  {
    total: { type: Number, required: true },
    batches: { type: Number, required: true },
    batch_size: { type: Number, required: true },
    max_failures: { type: Number, required: true },
    strategy: { type: strategySchema, default: null },
    // The deployment's rollback when the run was triggered (its steps as they were then).
    rollback: { type: rollbackDefinitionSchema, default: null },
  },
  { _id: false },
);

/** A fleet run's rollback: started when it halted (or on request), then how it went. */
const runRollbackSchema = new Schema(
  {
    status: { type: String, enum: ['running', 'success', 'failed'], required: true },
    reason: { type: String, required: true },
    requested_by: { type: actorSchema, default: null },
    touched: { type: Number, required: true },
    succeeded: { type: Number, default: 0 },
    failed: { type: Number, default: 0 },
    summary: { type: String, default: null },
    started_at: { type: Date, required: true },
    completed_at: { type: Date, default: null },
  },
  { _id: false },
);

/** What a rollback run undoes: a fleet run's target. */
const rollsBackSchema = new Schema(
  {
    run_id: { type: Schema.Types.ObjectId, required: true },
    target_id: { type: Schema.Types.ObjectId, required: true },
    batch: { type: Number, required: true },
    reason: { type: String, required: true },
  },
  { _id: false },
);

/*
 * One collection, three kinds of document:
 * - a one-server run: `server_id` set, its `steps` run by its own workflow from the server's queue;
 * - a fleet run: `fleet` set, `server_id` null, steps as defined (never run themselves);
 * - a fleet run's target: `parent_run_id` set, one server, its `steps` run like a one-server run's;
 * - a rollback run: `rolls_back` set (the fleet run and target it undoes), one server, the
 *   deployment's rollback steps run like a one-server run's; read through its fleet run's target.
 * The API lists and addresses runs only (`parent_run_id` null); a target is read through its run.
 */
const runScheduleSchema = new Schema({ id: { type: Schema.Types.ObjectId, required: true }, name: { type: String, required: true }, scheduled_at: { type: Date, required: true } }, { _id: false });

const deploymentRunSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    deployment_id: { type: Schema.Types.ObjectId, ref: 'Deployment', required: true },
    server_id: { type: Schema.Types.ObjectId, ref: 'Server', default: null },
    status: { type: String, enum: TARGET_STATUSES, required: true, default: 'queued' },
    triggered_by: { type: String, required: true },
    // null: triggered by a person signed in without a token (OpenID Connect).
    token_id: { type: Schema.Types.ObjectId, default: null },
    // The identity and token that triggered it (null on runs of an older version: `triggered_by` names the token).
    actor: { type: actorSchema, default: null },
    idempotency_key: { type: String, default: null },
    // What the run was triggered with, digested (the Idempotency-Key covers them), and the parameters themselves.
    request_digest: { type: String, default: null },
    parameters: { type: [runParameterSchema], default: [] },
    retry_of: { type: Schema.Types.ObjectId, default: null },
    // Steps before this one succeeded in the run retried: this run skips them.
    start_step: { type: Number, default: 0 },
    fleet: { type: fleetSchema, default: null },
    parent_run_id: { type: Schema.Types.ObjectId, default: null },
    batch: { type: Number, default: null },
    server_title: { type: String, default: null },
    server_host: { type: String, default: null },
    // Place in the server's queue: runs of a server execute in this order, one at a time. A fleet
    // run has none; its target takes one when its batch starts.
    queue_seq: { type: Number, default: null },
    steps: { type: [runStepSchema], required: true },
    started_at: { type: Date, default: null },
    completed_at: { type: Date, default: null },
    cancel_requested_at: { type: Date, default: null },
    // Who asked for the cancel (the identity and its token).
    cancelled_by: { type: actorSchema, default: null },
    // What was reviewed: the hash of its plan (targets and batches, steps, strategy, parameters) when it was triggered.
    plan_hash: { type: String, default: null },
    // A run a schedule's tick started: which schedule, and the tick's due time.
    schedule: { type: runScheduleSchema, default: null },
    // A fleet run's approval gate, open or last decided; its pause, asked or held.
    gate: { type: gateSchema, default: null },
    pause: { type: pauseSchema, default: null },
    // Triggered through change freezes by a person's override; held between batches by one (status frozen).
    freeze_override: { type: freezeOverrideSchema, default: null },
    freeze: { type: runFreezeSchema, default: null },
    // A fleet target's health check after its batch (null: none ran).
    health: { type: healthSchema, default: null },
    // A fleet run's rollback (status and counts); on a rollback run (a one-server run of the rollback steps), what it undoes.
    rollback: { type: runRollbackSchema, default: null },
    rolls_back: { type: rollsBackSchema, default: null },
    error: { type: String, default: null },
    // Bumped by every persisted change: the sequence number of live events.
    seq: { type: Number, required: true, default: 0 },
    last_chunk: lastChunkField,
  },
  { timestamps: true },
);
deploymentRunSchema.index({ deployment_id: 1, createdAt: -1, _id: -1 });
// A fleet run's rollback runs.
deploymentRunSchema.index({ 'rolls_back.run_id': 1 }, { partialFilterExpression: { 'rolls_back.run_id': { $exists: true } } });
// A fleet run's targets, batch by batch.
deploymentRunSchema.index({ parent_run_id: 1, batch: 1 }, { partialFilterExpression: { parent_run_id: { $type: 'objectId' } } });
deploymentRunSchema.index({ server_id: 1, status: 1, queue_seq: 1 });
// A server's latest runs (its page's activity).
deploymentRunSchema.index({ server_id: 1, createdAt: -1, _id: -1 }, { partialFilterExpression: { server_id: { $type: 'objectId' } } });
// The organization's runs still to finish, counted against its limit at each trigger.
deploymentRunSchema.index({ organization_id: 1, status: 1, parent_run_id: 1 });
deploymentRunSchema.index(
  { deployment_id: 1, idempotency_key: 1 },
  { unique: true, partialFilterExpression: { idempotency_key: { $type: 'string' } } },
);

export type DeploymentRun = InferSchemaType<typeof deploymentRunSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type RunStep = DeploymentRun['steps'][number];
export const DeploymentRunModel = model('DeploymentRun', deploymentRunSchema);
