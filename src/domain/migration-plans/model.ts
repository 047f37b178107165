import { Schema, Types, model, type InferSchemaType } from 'mongoose';

/** A planned move from one server of an organization to another; conversations about it run on both. */
const migrationPlanSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    title: { type: String, required: true },
    source_server_id: { type: Schema.Types.ObjectId, ref: 'Server', required: true },
    target_server_id: { type: Schema.Types.ObjectId, ref: 'Server', required: true },
    notes: { type: String, default: '' },
  },
  { timestamps: true },
);
migrationPlanSchema.index({ organization_id: 1, createdAt: -1, _id: -1 });

export type MigrationPlan = InferSchemaType<typeof migrationPlanSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export const MigrationPlanModel = model('MigrationPlan', migrationPlanSchema);
