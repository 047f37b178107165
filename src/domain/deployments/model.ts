import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { executionFields, lastChunkField } from '../execution/fields';

export const RUN_STATUSES = ['queued', 'running', 'success', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['success', 'failed', 'cancelled'];
export const STEP_STATUSES = ['pending', 'running', 'success', 'failed', 'skipped', 'cancelled'] as const;
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

const deploymentSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    server_id: { type: Schema.Types.ObjectId, ref: 'Server', required: true, index: true },
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

const deploymentRunSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    deployment_id: { type: Schema.Types.ObjectId, ref: 'Deployment', required: true },
    server_id: { type: Schema.Types.ObjectId, ref: 'Server', required: true },
    status: { type: String, enum: RUN_STATUSES, required: true, default: 'queued' },
    triggered_by: { type: String, required: true },
    token_id: { type: Schema.Types.ObjectId, required: true },
    idempotency_key: { type: String, default: null },
    // Place in the server's queue: runs of a server execute in this order, one at a time.
    queue_seq: { type: Number, required: true },
    steps: { type: [runStepSchema], required: true },
    started_at: { type: Date, default: null },
    completed_at: { type: Date, default: null },
    cancel_requested_at: { type: Date, default: null },
    error: { type: String, default: null },
    // Bumped by every persisted change: the sequence number of live events.
    seq: { type: Number, required: true, default: 0 },
    last_chunk: lastChunkField,
  },
  { timestamps: true },
);
deploymentRunSchema.index({ deployment_id: 1, createdAt: -1, _id: -1 });
deploymentRunSchema.index({ server_id: 1, status: 1, queue_seq: 1 });
// The organization's runs still to finish, counted against its limit at each trigger.
deploymentRunSchema.index({ organization_id: 1, status: 1 });
deploymentRunSchema.index(
  { deployment_id: 1, idempotency_key: 1 },
  { unique: true, partialFilterExpression: { idempotency_key: { $type: 'string' } } },
);

export type DeploymentRun = InferSchemaType<typeof deploymentRunSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type RunStep = DeploymentRun['steps'][number];
export const DeploymentRunModel = model('DeploymentRun', deploymentRunSchema);
