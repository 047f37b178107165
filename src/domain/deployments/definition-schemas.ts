/* The parts of a deployment's definition: its steps, parameters, strategy and rollback (a fleet run keeps a snapshot of the last two). */
import { Schema } from 'mongoose';

export const stepDefinitionSchema = new Schema(
  {
    name: { type: String, required: true },
    command: { type: String, required: true },
    timeout_seconds: { type: Number, default: null },
    retries: { type: Number, default: 0 },
    continue_on_error: { type: Boolean, default: false },
  },
  { _id: false },
);

export const parameterDefinitionSchema = new Schema(
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

/** `batch_size` / `max_concurrency` / `max_failures`: a count, or a percentage of the targets as a string ("25%"); null: the default. */
export const strategySchema = new Schema(
  {
    batch_size: { type: Schema.Types.Mixed, default: null },
    // A rolling window instead of batches (never both): see api/deployments/schemas.ts.
    max_concurrency: { type: Schema.Types.Mixed, default: null },
    max_failures: { type: Schema.Types.Mixed, default: null },
    // Approval gates: before batch `before_batch` (or, in a window, target `before_target`), `approvals` distinct people approve within `expires_in`.
    gates: {
      type: [new Schema({ before_batch: { type: Number }, before_target: { type: Number }, approvals: { type: Number, required: true }, expires_in: { type: String, required: true } }, { _id: false })],
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

export const rollbackDefinitionSchema = new Schema(
  {
    steps: { type: [stepDefinitionSchema], required: true },
    automatic: { type: Boolean, default: true },
  },
  { _id: false },
);
