import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { actorSchema } from '../access/actor';
import { managedByField } from '../config/managed-by';

/**
 * A change freeze: while one of its windows is open, no run may start on the servers it covers
 * (those having one of its `tags`, or every server when `tags` is null). A window is either one-off
 * (`starts_at`–`ends_at`) or recurring (each fire of `cron` in `time_zone`, lasting `duration`).
 */
const freezeSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    name: { type: String, required: true },
    // One-off: both set, cron and duration null.
    starts_at: { type: Date, default: null },
    ends_at: { type: Date, default: null },
    // Recurring: both set, starts_at and ends_at null.
    cron: { type: String, default: null },
    duration: { type: String, default: null },
    time_zone: { type: String, required: true, default: 'UTC' },
    // null: every server of the organization.
    tags: { type: [String], default: null },
    note: { type: String, default: null },
    created_by: { type: actorSchema, required: true },
    updated_by: { type: actorSchema, required: true },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
freezeSchema.index({ organization_id: 1, name: 1 }, { unique: true });

export type Freeze = InferSchemaType<typeof freezeSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export const FreezeModel = model('Freeze', freezeSchema);
