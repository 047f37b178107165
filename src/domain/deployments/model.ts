/* The deployments and their runs: the two collections' schemas and models (statuses in statuses.ts) (their sub-documents' schemas beside: definition-schemas, run-guard-schemas, run-part-schemas). */
import { actorSchema } from '../access/actor';
import { parameterDefinitionSchema, rollbackDefinitionSchema, stepDefinitionSchema, strategySchema } from './definition-schemas';
import { freezeOverrideSchema, gateSchema, pauseSchema, runFreezeSchema, waitedSchema } from './run-guard-schemas';
import { fleetSchema, healthSchema, rollsBackSchema, runParameterSchema, runPipelineSchema, runRollbackSchema, runScheduleSchema } from './run-part-schemas';
import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { executionFields, lastChunkField } from '../execution/fields';

export { RUN_STATUSES, FINAL_RUN_STATUSES, BEGUN_RUN_STATUSES, UNFINISHED_RUN_STATUSES, STEP_STATUSES, TARGET_STATUSES } from './statuses';
export type { RunStatus, BegunRunStatus, TargetStatus, StepStatus } from './statuses';
import { STEP_STATUSES, TARGET_STATUSES } from './statuses';
import { managedByField } from '../managed-by';

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
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
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
    // What its command (its last attempt) wrote to BOSUN_OUTPUT, values redacted; the run's outputs are its steps', later ones winning.
    outputs: { type: [new Schema({ name: { type: String, required: true }, value: { type: String, required: true } }, { _id: false })], default: undefined },
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
    // A fleet target run in a workflow it shares with other targets (its group's), which its queue
    // tells of its turn: that workflow's id, recorded with its place. Null: the run's own workflow.
    workflow_id: { type: String, default: null },
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
    // A pipeline run's stage: which pipeline run and stage (its workflow is a child of the pipeline run's).
    pipeline_run: { type: runPipelineSchema, default: null },
    // A fleet run's approval gate, open or last decided; its pause, asked or held.
    gate: { type: gateSchema, default: null },
    pause: { type: pauseSchema, default: null },
    // Triggered through change freezes by a person's override; held between batches by one (status frozen).
    freeze_override: { type: freezeOverrideSchema, default: null },
    freeze: { type: runFreezeSchema, default: null },
    // The time it waited in holds that ended (a gate decided, a pause resumed, a freeze lifted), apart from the time it ran.
    waited: { type: waitedSchema, default: () => ({}) },
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
// A deployment's runs, newest first (its runs list, its last run: `lastRunsOf`), without its fleet runs' targets.
deploymentRunSchema.index({ deployment_id: 1, parent_run_id: 1, createdAt: -1, _id: -1 });
/** Indexes of earlier versions, dropped at start: a deployment's runs once had no `parent_run_id`, and read past every target of its fleet runs. */
export const RETIRED_RUN_INDEXES = ['deployment_id_1_createdAt_-1__id_-1'];
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
