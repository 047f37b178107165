import { Schema, model, type InferSchemaType } from 'mongoose';
import { managedByField } from '../config/managed-by';

const organizationSchema = new Schema(
  {
    slug: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    // What conversations may run (see src/planner/policy.ts); null means the default policy.
    policy: {
      type: new Schema(
        {
          allow_destructive: { type: Boolean, required: true },
          require_approval_for: { type: [{ type: String, enum: ['read', 'change', 'destructive'] }], default: [] },
          // Conversations started by a service account (an agent) hold `change` steps for a person; destructive ones always.
          agents_require_approval_for_change: { type: Boolean, default: true },
        },
        { _id: false },
      ),
      default: null,
    },
    // The Git source that applied the command policy (null: set through the API or never set).
    policy_managed_by: managedByField,
    // Notifications: whether channels may send to loopback and private addresses (allowed unless refused).
    notification_settings: {
      type: new Schema({ refuse_private_addresses: { type: Boolean, required: true, default: false } }, { _id: false }),
      default: null,
    },
  },
  { timestamps: true },
);

export type Organization = InferSchemaType<typeof organizationSchema>;
export const OrganizationModel = model('Organization', organizationSchema);

export const ORG_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** Finds an organization by slug, creating it on first mention; safe when two callers race. */
export async function ensureOrganization(slug: string) {
  if (!ORG_SLUG_PATTERN.test(slug)) {
    throw new Error(`Invalid organization slug "${slug}": use lowercase letters, digits and dashes (at most 64)`);
  }
  return OrganizationModel.findOneAndUpdate(
    { slug },
    { $setOnInsert: { slug, name: slug } },
    { upsert: true, returnDocument: 'after' },
  ).orFail();
}
