import { Schema, Types, model, type InferSchemaType } from 'mongoose';
import { ROLES } from './roles';
import { accessCache } from './cache';
import { managedByField } from '../config/managed-by';

/** Every write that can change rights, as mongoose names them: what this process writes, it forgets at once. */
const WRITES = ['save', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany', 'findOneAndUpdate', 'findOneAndDelete', 'insertMany'] as const;
const forgetOnWrite = (schema: Schema) => {
  for (const write of WRITES) schema.post(write as 'save', () => accessCache.changed());
};

/**
 * Who acts in an organization: a person (signs in to the console, decides approvals) or a service
 * account (a CI pipeline, a script, an agent). Every token belongs to exactly one identity.
 */
const identitySchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    type: { type: String, enum: ['person', 'service_account'], required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    description: { type: String, default: null },
    // A service account an AI agent acts as: the conversations it starts hold change and destructive steps for a person.
    agent: { type: Boolean, default: false },
    // A person who signs in through OpenID Connect: the provider's `sub` for them.
    oidc_subject: { type: String, default: null },
    // A disabled person's sessions and tokens stop at once.
    disabled_at: { type: Date, default: null },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
identitySchema.index({ organization_id: 1, type: 1, name: 1 }, { unique: true });
identitySchema.index(
  { organization_id: 1, oidc_subject: 1 },
  { unique: true, partialFilterExpression: { oidc_subject: { $type: 'string' } } },
);

export type Identity = InferSchemaType<typeof identitySchema> & { _id: Types.ObjectId };
forgetOnWrite(identitySchema);
export const IdentityModel = model('Identity', identitySchema);

/** People who share role bindings; a provider's groups (OpenID Connect) may map onto a team. */
const teamSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    name: { type: String, required: true },
    members: { type: [Schema.Types.ObjectId], ref: 'Identity', default: [] },
    oidc_groups: { type: [String], default: [] },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
teamSchema.index({ organization_id: 1, name: 1 }, { unique: true });
teamSchema.index({ members: 1 });

export type Team = InferSchemaType<typeof teamSchema> & { _id: Types.ObjectId };
forgetOnWrite(teamSchema);
export const TeamModel = model('Team', teamSchema);

/**
 * A role given to a person, team or service account: organization-wide, or limited to the servers
 * having all of some tags and/or to named deployments, and optionally to a number of servers per run.
 */
const roleBindingSchema = new Schema(
  {
    organization_id: { type: Schema.Types.ObjectId, ref: 'Organization', required: true },
    role: { type: String, enum: ROLES, required: true },
    subject: {
      type: new Schema(
        { type: { type: String, enum: ['person', 'team', 'service_account'], required: true }, id: { type: Schema.Types.ObjectId, required: true } },
        { _id: false },
      ),
      required: true,
    },
    // null: every server; otherwise the servers having all of these tags.
    server_tags: { type: [String], default: null },
    // null: every deployment; otherwise these.
    deployments: { type: [Schema.Types.ObjectId], default: null },
    max_targets_per_run: { type: Number, default: null },
    // A definition kept in Git owns a binding by its name (null: made through the API without one).
    name: { type: String, default: null },
    // The Git source that applied it (null: made through the API, the console, the CLI).
    managed_by: managedByField,
  },
  { timestamps: true },
);
roleBindingSchema.index({ 'subject.id': 1 });
roleBindingSchema.index({ organization_id: 1, createdAt: 1 });
roleBindingSchema.index({ organization_id: 1, name: 1 }, { unique: true, partialFilterExpression: { name: { $type: 'string' } } });

export type RoleBinding = InferSchemaType<typeof roleBindingSchema> & { _id: Types.ObjectId };
forgetOnWrite(roleBindingSchema);
export const RoleBindingModel = model('RoleBinding', roleBindingSchema);
