import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { actorSchema } from '../access/actor';

/*
 * A sync source (issue 38, the pull side): a Git repository whose definitions Bosun fetches, plans
 * and applies by itself, as its `run_as` service account, every `every_seconds` (its Temporal
 * Schedule `bosun-config-source-<id>` follows the document) or on demand. Its `name` is the `source`
 * every object it applies carries in `managed_by`. The deploy key or token is sealed with the
 * organization's SecretBox (bound to the source's id) and never leaves the server side.
 */

const lastPlanSchema = new Schema(
  {
    revision: { type: String, default: null },
    plan_hash: { type: String, default: null },
    create: { type: Number, required: true },
    update: { type: Number, required: true },
    delete: { type: Number, required: true },
    unchanged: { type: Number, required: true },
    // The problems' `file:line:column: message` texts (the first ones: the count says how many in all); `errors` in the API.
    problems: { type: [String], default: [] },
    error_count: { type: Number, required: true, default: 0 },
    at: { type: Date, required: true },
  },
  { _id: false },
);

const driftSchema = new Schema(
  { kind: { type: String, required: true }, name: { type: String, required: true }, path: { type: String, required: true }, forced_at: { type: String, default: null }, forced_by: { type: String, default: null } },
  { _id: false },
);

const statusSchema = new Schema(
  {
    revision_applied: { type: String, default: null },
    last_plan: { type: lastPlanSchema, default: null },
    // Why the last sync applied nothing: { code, message, at, revision } (null after a good one).
    last_error: {
      type: new Schema({ code: { type: String, required: true }, message: { type: String, required: true }, at: { type: Date, required: true }, revision: { type: String, default: null } }, { _id: false }),
      default: null,
    },
    synced_at: { type: Date, default: null },
    drift: { type: [driftSchema], default: [] },
    // The key an SSH host offered when a sync was refused for it (pinned by a sync with trust_new_host_key).
    offered_host_key: { type: new Schema({ key: { type: String, required: true }, fingerprint: { type: String, required: true } }, { _id: false }), default: null },
  },
  { _id: false },
);

const configSourceSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    name: { type: String, required: true },
    git: {
      type: new Schema({ url: { type: String, required: true }, ref: { type: String, required: true }, path: { type: String, default: '' } }, { _id: false }),
      required: true,
    },
    every: { type: String, default: null },
    every_seconds: { type: Number, default: null },
    prune: { type: Boolean, required: true, default: false },
    // Sealed JSON of { type: 'ssh_key', private_key, passphrase? } | { type: 'token', token, username? }, or null.
    credentials: { type: String, default: null, select: false },
    host_key: { type: String, default: null },
    host_key_fingerprint: { type: String, default: null },
    web_url: { type: String, default: null },
    run_as: { type: actorSchema, required: true },
    status: { type: statusSchema, required: true, default: () => ({}) },
    created_by: { type: actorSchema, required: true },
    updated_by: { type: actorSchema, required: true },
  },
  { timestamps: true },
);
configSourceSchema.index({ organization_id: 1, name: 1 }, { unique: true });

export const ConfigSourceModel = model('ConfigSource', configSourceSchema);
export type ConfigSource = InferSchemaType<typeof configSourceSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export type ConfigSourceStatus = InferSchemaType<typeof statusSchema>;
