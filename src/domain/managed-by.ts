import { Schema } from 'mongoose';

/**
 * `managed_by` on every kind's document (null: made through the API, the console, the CLI): the
 * source that applied it, its revision and file, and the spec's hash as applied (src/domain/config/types.ts ManagedBy).
 * Here, under no folder, so every model may import it without a loop through src/domain/config.
 */
export const managedBySchema = new Schema(
  {
    source: { type: String, required: true },
    revision: { type: String, default: null },
    path: { type: String, required: true },
    // The file on the source's web host at that revision, when the source has a web URL.
    url: { type: String, default: null },
    applied_at: { type: Date, required: true },
    spec_hash: { type: String, required: true },
    forced_at: { type: Date, default: null },
    forced_by: { type: String, default: null },
  },
  { _id: false },
);

/** The field as each kind's schema declares it. */
export const managedByField = { type: managedBySchema, default: null };
