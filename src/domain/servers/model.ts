import { Schema, Types, model, type InferSchemaType } from 'mongoose';

export const SERVER_STATUSES = ['unverified', 'verified', 'offline'] as const;
export type ServerStatus = (typeof SERVER_STATUSES)[number];
export const AUTH_METHODS = ['private_key', 'password'] as const;

const fingerprintSchema = new Schema(
  {
    os: { name: String, version: String, kernel: String },
    cpu_cores: Number,
    ram: String,
    disk: String,
  },
  { _id: false },
);

/** Where an imported server came from: the import's `source` and the host's name there; and the tags that import gave it. */
const inventorySchema = new Schema(
  {
    source: { type: String, required: true },
    name: { type: String, required: true },
    // Only these are replaced by a re-import: tags a person added stay.
    tags: { type: [String], default: [] },
    // Its jump hosts by name, as the inventory gave them (what a re-import compares).
    via: { type: [String], default: [] },
  },
  { _id: false },
);

const serverSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    title: { type: String, required: true },
    // Lowercase words a deployment's targets select servers by (all of its tags).
    tags: { type: [String], default: [] },
    host: { type: String, required: true },
    port: { type: Number, required: true },
    username: { type: String, required: true },
    auth_method: { type: String, enum: AUTH_METHODS, required: true },
    // AES-256-GCM, bound to this server's id; never selected unless asked for.
    credentials: { type: String, required: true, select: false },
    status: { type: String, enum: SERVER_STATUSES, required: true, default: 'unverified' },
    fingerprint: { type: fingerprintSchema, default: null },
    host_key_fingerprint: { type: String, default: null },
    // The jump hosts it is reached through, in order (`ssh -J`): servers of the same organization.
    via: { type: [Schema.Types.ObjectId], default: [] },
    last_error: { type: String, default: null },
    verified_at: { type: Date, default: null },
    last_checked_at: { type: Date, default: null },
    // Set when an inventory import added or adopted it; null for a server added by hand.
    inventory: { type: inventorySchema, default: null },
    // Hands out each deployment run's place in this server's queue, in trigger order.
    run_seq: { type: Number, default: 0 },
    // The run whose turn it is on this server (runs on one server never interleave); null when none.
    turn_run_id: { type: Schema.Types.ObjectId, default: null },
    // The turn was given by the server's queue workflow, which waits for that run's end itself (no wake needed).
    turn_by_queue: { type: Boolean, default: false },
  },
  { timestamps: true },
);

serverSchema.index({ organization_id: 1, createdAt: -1, _id: -1 });
// One server per login and address reached the same way: the same private address behind two
// bastions is two servers (`via` is the index's one array: a shared hop counts as the same way).
serverSchema.index({ organization_id: 1, host: 1, port: 1, username: 1, via: 1 }, { unique: true, name: 'organization_login_address_via' });

/** Indexes of earlier releases that would refuse what today's allow: dropped before the models' own are built. */
export const RETIRED_SERVER_INDEXES = ['organization_id_1_host_1_port_1_username_1'];
serverSchema.index({ organization_id: 1, tags: 1 });
serverSchema.index({ organization_id: 1, 'inventory.source': 1 });
// The servers behind a jump host (refusing its deletion, following a change of its route).
serverSchema.index({ organization_id: 1, via: 1 });

export type Server = InferSchemaType<typeof serverSchema> & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
export const ServerModel = model('Server', serverSchema);

/** What the Temporal client needs of a server to start its workflows. */
export const toRef = (s: Server) => ({
  id: s._id.toString(),
  organizationId: s.organization_id.toString(),
  title: s.title,
  host: s.host,
});
