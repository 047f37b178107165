/* Pipelines and their runs: a release as a graph of stages, each stage a run of an existing deployment. */
import { managedByField } from '../config/managed-by';
import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { actorSchema } from '../access/actor';
import { parameterDefinitionSchema, rollbackDefinitionSchema, stepDefinitionSchema, strategySchema } from '../deployments/definition-schemas';
import { gateSchema } from '../deployments/run-guard-schemas';
import { runParameterSchema, runScheduleSchema } from '../deployments/run-part-schemas';

/** When a stage runs, from how the stages it needs ended: all succeeded (default), one failed, or whatever happened. */
export const STAGE_WHEN = ['success', 'failure', 'always'] as const;
export type StageWhen = (typeof STAGE_WHEN)[number];

/** At most this many stages in one pipeline. */
export const MAX_STAGES = 50;

/** A stage's parameter: its deployment's parameter name, and its value (text with `${{ … }}` expressions). */
const stageParameterSchema = new Schema({ name: { type: String, required: true }, value: { type: String, required: true } }, { _id: false });

/** A gate before a stage: `approvals` distinct people (never the triggerer) approve within `expires_in`. */
export const stageGateSchema = new Schema({ approvals: { type: Number, required: true }, expires_in: { type: String, required: true, default: '24h' } }, { _id: false });

const stageSchema = new Schema(
  {
    name: { type: String, required: true },
    deployment_id: { type: Schema.Types.ObjectId, ref: 'Deployment', required: true },
    needs: { type: [String], default: [] },
    when: { type: String, enum: STAGE_WHEN, required: true, default: 'success' },
    gate: { type: stageGateSchema, default: null },
    parameters: { type: [stageParameterSchema], default: [] },
  },
  { _id: false },
);

const pipelineSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    parameters: { type: [parameterDefinitionSchema], default: [] },
    stages: { type: [stageSchema], required: true },
    created_by: { type: actorSchema, default: null },
    updated_by: { type: actorSchema, default: null },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
pipelineSchema.index({ organization_id: 1, name: 1 }, { unique: true });
// The pipelines that use a deployment (its delete is refused while one does).
pipelineSchema.index({ 'stages.deployment_id': 1 });

export type Pipeline = InferSchemaType<typeof pipelineSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type PipelineStage = Pipeline['stages'][number];
export const PipelineModel = model('Pipeline', pipelineSchema);

/**
 * A pipeline run's statuses: queued until its workflow begins; running while a stage runs or will;
 * awaiting_approval while nothing runs and a stage's gate waits for people.
 */
export const PIPELINE_RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'success', 'failed', 'cancelled'] as const;
export type PipelineRunStatus = (typeof PIPELINE_RUN_STATUSES)[number];
export const FINAL_PIPELINE_RUN_STATUSES: readonly PipelineRunStatus[] = ['success', 'failed', 'cancelled'];

export const STAGE_STATUSES = ['pending', 'awaiting_approval', 'running', 'success', 'failed', 'skipped', 'cancelled'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];
export const FINAL_STAGE_STATUSES: readonly StageStatus[] = ['success', 'failed', 'skipped', 'cancelled'];

/** A stage as its run records it: the definition it ran with (a snapshot), and what became of it. */
const runStageSchema = new Schema(
  {
    name: { type: String, required: true },
    deployment_id: { type: Schema.Types.ObjectId, required: true },
    deployment_name: { type: String, required: true },
    // The deployment's steps, strategy and rollback when the pipeline run was triggered: what the stage's run runs (null in runs of before).
    definition: {
      type: new Schema({ steps: { type: [stepDefinitionSchema], required: true }, strategy: { type: strategySchema, default: null }, rollback: { type: rollbackDefinitionSchema, default: null } }, { _id: false }),
      default: null,
    },
    needs: { type: [String], default: [] },
    when: { type: String, enum: STAGE_WHEN, required: true, default: 'success' },
    // The gate's definition; `gate_state` the gate as it was opened and decided (the approval rules of a fleet run's gate).
    gate: { type: stageGateSchema, default: null },
    gate_state: { type: gateSchema, default: null },
    parameters: { type: [stageParameterSchema], default: [] },
    status: { type: String, enum: STAGE_STATUSES, required: true, default: 'pending' },
    // The deployment run this stage started (null until it did).
    deployment_run_id: { type: Schema.Types.ObjectId, default: null },
    // name → value, as its deployment run recorded them (a retry keeps a succeeded stage's).
    outputs: { type: Schema.Types.Mixed, default: () => ({}) },
    // name → why its value cannot be used: a fleet stage's targets gave different values.
    output_conflicts: { type: Schema.Types.Mixed, default: () => ({}) },
    // Why it failed, or why it was skipped ("needs staging, which failed").
    error: { type: String, default: null },
    // Kept from the pipeline run this one retries (it succeeded there): not run again.
    kept_from: { type: Schema.Types.ObjectId, default: null },
    started_at: { type: Date, default: null },
    completed_at: { type: Date, default: null },
  },
  { _id: false },
);

const pipelineRunSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    pipeline_id: { type: Schema.Types.ObjectId, ref: 'Pipeline', required: true },
    pipeline_name: { type: String, required: true },
    status: { type: String, enum: PIPELINE_RUN_STATUSES, required: true, default: 'queued' },
    parameters: { type: [runParameterSchema], default: [] },
    triggered_by: { type: String, required: true },
    token_id: { type: Schema.Types.ObjectId, default: null },
    actor: { type: actorSchema, default: null },
    // The scopes of the token it was triggered with: each stage's run is triggered as its actor, narrowed by them.
    scopes: { type: [String], default: ['admin'] },
    idempotency_key: { type: String, default: null },
    request_digest: { type: String, default: null },
    retry_of: { type: Schema.Types.ObjectId, default: null },
    plan_hash: { type: String, default: null },
    schedule: { type: runScheduleSchema, default: null },
    stages: { type: [runStageSchema], required: true },
    started_at: { type: Date, default: null },
    completed_at: { type: Date, default: null },
    cancel_requested_at: { type: Date, default: null },
    cancelled_by: { type: actorSchema, default: null },
    error: { type: String, default: null },
    seq: { type: Number, required: true, default: 0 },
  },
  { timestamps: true },
);
pipelineRunSchema.index({ pipeline_id: 1, createdAt: -1, _id: -1 });
pipelineRunSchema.index({ organization_id: 1, status: 1 });
pipelineRunSchema.index({ pipeline_id: 1, idempotency_key: 1 }, { unique: true, partialFilterExpression: { idempotency_key: { $type: 'string' } } });

export type PipelineRun = InferSchemaType<typeof pipelineRunSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type PipelineRunStage = PipelineRun['stages'][number];
export const PipelineRunModel = model('PipelineRun', pipelineRunSchema);
