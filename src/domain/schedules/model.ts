import { managedByField } from '../config/managed-by';
import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { actorSchema } from '../access/actor';
import { runParameterSchema } from '../deployments/run-part-schemas';

/*
 * A deployment's or a pipeline's schedule (exactly one of `deployment_id` and `pipeline_id`): when it runs by itself (a cron expression or an interval, in a time
 * zone), as which service account, with which parameters. The document is the source of truth; its
 * Temporal Schedule (`bosun-schedule-<id>`) follows it (src/domain/temporal/schedules.ts), and
 * `revision` says which version of it the Temporal Schedule carries.
 */

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'cancel_other', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Why a tick did not start a run. */
export const SKIP_REASONS = ['missed', 'overlap', 'frozen', 'paused', 'forbidden', 'refused'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];
export const TICK_OUTCOMES = ['fired', ...SKIP_REASONS] as const;
export type TickOutcome = (typeof TICK_OUTCOMES)[number];

const scheduleSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    // What each tick runs: a deployment (a run of it), or a pipeline (a pipeline run); the other is null.
    deployment_id: { type: Schema.Types.ObjectId, ref: 'Deployment', default: null },
    pipeline_id: { type: Schema.Types.ObjectId, ref: 'Pipeline', default: null },
    name: { type: String, required: true },
    // One of the two: a five-field cron expression, or an interval ("6h", its seconds beside it).
    cron: { type: String, default: null },
    every: { type: String, default: null },
    every_seconds: { type: Number, default: null },
    time_zone: { type: String, required: true },
    parameters: { type: [runParameterSchema], default: [] },
    overlap: { type: String, enum: OVERLAP_POLICIES, required: true, default: 'skip' },
    catch_up_window: { type: String, required: true, default: '5m' },
    catch_up_window_seconds: { type: Number, required: true, default: 300 },
    jitter: { type: String, default: null },
    jitter_seconds: { type: Number, required: true, default: 0 },
    paused: { type: Boolean, required: true, default: false },
    note: { type: String, default: null },
    // Who paused or unpaused it last, when and why.
    pause_note: { type: String, default: null },
    paused_by: { type: actorSchema, default: null },
    paused_at: { type: Date, default: null },
    // Pauses past and present, each with its own note, so a tick that fell in one is recorded as `paused` with why.
    pauses: { type: [new Schema({ from: { type: Date, required: true }, to: { type: Date, default: null }, note: { type: String, default: null } }, { _id: false })], default: [] },
    // The service account each tick runs as (its grants are checked at every tick).
    run_as: { type: actorSchema, required: true },
    created_by: { type: actorSchema, required: true },
    updated_by: { type: actorSchema, required: true },
    revision: { type: Number, required: true, default: 1 },
    // Ticks due up to this time have been accounted for (fired or recorded as skipped).
    ledger_until: { type: Date, required: true },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
// A name is unique per deployment, and per pipeline.
scheduleSchema.index({ deployment_id: 1, name: 1 }, { unique: true, name: 'deployment_schedule_name', partialFilterExpression: { deployment_id: { $type: 'objectId' } } });
scheduleSchema.index({ pipeline_id: 1, name: 1 }, { unique: true, name: 'pipeline_schedule_name', partialFilterExpression: { pipeline_id: { $type: 'objectId' } } });
scheduleSchema.index({ organization_id: 1, _id: 1 });

export const ScheduleModel = model('Schedule', scheduleSchema);
/** Indexes of older versions, dropped at start: a name unique per deployment even where there is none (a pipeline's schedule). */
export const RETIRED_SCHEDULE_INDEXES = ['deployment_id_1_name_1'];
export type Schedule = InferSchemaType<typeof scheduleSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };

/**
 * One tick of a schedule: when it was due (`scheduled_at`, before jitter; for a run-now, when it was
 * asked), and what came of it — a run, or the reason none started.
 */
const scheduleTickSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, required: true },
    schedule_id: { type: Schema.Types.ObjectId, required: true },
    deployment_id: { type: Schema.Types.ObjectId, default: null },
    pipeline_id: { type: Schema.Types.ObjectId, default: null },
    scheduled_at: { type: Date, required: true },
    // A run-now a person asked for (POST …/trigger); null for the clock's ticks.
    requested_by: { type: actorSchema, default: null },
    outcome: { type: String, enum: TICK_OUTCOMES, required: true },
    run_id: { type: Schema.Types.ObjectId, default: null },
    message: { type: String, default: null },
    recorded_at: { type: Date, required: true },
  },
  { versionKey: false },
);
scheduleTickSchema.index({ schedule_id: 1, scheduled_at: 1, requested_by: 1 }, { unique: true });
scheduleTickSchema.index({ schedule_id: 1, scheduled_at: -1, _id: -1 });

export const ScheduleTickModel = model('ScheduleTick', scheduleTickSchema);
export type ScheduleTick = InferSchemaType<typeof scheduleTickSchema> & { _id: Types.ObjectId };
