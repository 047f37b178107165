import { Schema, Types, model, type InferSchemaType } from 'mongoose';

const apiTokenSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true, index: true },
    name: { type: String, required: true },
    // The person or service account the token acts for (absent only on tokens of an older version, until the first start).
    identity_id: { type: Schema.Types.ObjectId, ref: 'Identity', index: true },
    // Only set while the token is active: a revoked token's name may be reused.
    active_name: { type: String },
    token_hash: { type: String, required: true, unique: true },
    // Not secret: finds the candidates whose hash is then compared in constant time.
    prefix: { type: String, required: true, index: true },
    scopes: { type: [String], required: true },
    last_used_at: { type: Date, default: null },
    revoked_at: { type: Date, default: null },
    // Null: the token does not expire.
    expires_at: { type: Date, default: null },
  },
  { timestamps: true },
);

apiTokenSchema.index(
  { organization_id: 1, active_name: 1 },
  { unique: true, partialFilterExpression: { active_name: { $exists: true } } },
);

export type ApiToken = InferSchemaType<typeof apiTokenSchema> & { _id: Types.ObjectId };
export const ApiTokenModel = model('ApiToken', apiTokenSchema);
