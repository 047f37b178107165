/* The parts of a run's document besides its steps and guards: parameters, a fleet run's strategy and rollback, a target's health check, a rollback run's origin, a schedule's tick. */
import { Schema } from 'mongoose';
import { actorSchema } from '../access/actor';
import { rollbackDefinitionSchema, strategySchema } from './definition-schemas';

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
export const healthSchema = new Schema(
  {
    status: { type: String, enum: ['running', 'success', 'failed'], required: true },
    command: { type: String, required: true },
    attempts: { type: [healthAttemptSchema], default: [] },
    started_at: { type: Date, required: true },
    completed_at: { type: Date, default: null },
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
export const fleetSchema = new Schema(
  {
    total: { type: Number, required: true },
    batches: { type: Number, required: true },
    batch_size: { type: Number, required: true },
    // A rolling window: at most this many targets at once, `batch_size` its groups' size (null: batches).
    max_concurrency: { type: Number, default: null },
    max_failures: { type: Number, required: true },
    strategy: { type: strategySchema, default: null },
    // The deployment's rollback when the run was triggered (its steps as they were then).
    rollback: { type: rollbackDefinitionSchema, default: null },
  },
  { _id: false },
);

/** A fleet run's rollback: started when it halted (or on request), then how it went. */
export const runRollbackSchema = new Schema(
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
export const rollsBackSchema = new Schema(
  {
    run_id: { type: Schema.Types.ObjectId, required: true },
    target_id: { type: Schema.Types.ObjectId, required: true },
    batch: { type: Number, required: true },
    reason: { type: String, required: true },
  },
  { _id: false },
);

/** A run a schedule's tick started: which schedule, and the tick's due time. */
export const runScheduleSchema = new Schema({ id: { type: Schema.Types.ObjectId, required: true }, name: { type: String, required: true }, scheduled_at: { type: Date, required: true } }, { _id: false });

/** The pipeline run and stage a run is (its workflow the pipeline run's child). */
export const runPipelineSchema = new Schema({ id: { type: Schema.Types.ObjectId, required: true }, name: { type: String, required: true }, stage: { type: String, required: true } }, { _id: false });
