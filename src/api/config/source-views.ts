import type { ListedSource } from '../../domain/config-sources/store';
import type { SourceView } from './source-schemas';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/** A source as the API shows it: whether it has credentials, never them. */
export function sourceView(source: ListedSource): SourceView {
  const status = source.status ?? {};
  const plan = status.last_plan;
  const error = status.last_error;
  return {
    id: source._id.toString(),
    name: source.name,
    git: { url: source.git.url, ref: source.git.ref, path: source.git.path ?? '' },
    every: source.every ?? null,
    prune: source.prune,
    run_as: { id: String(source.run_as.id), name: source.run_as.name },
    web_url: source.web_url ?? null,
    has_credentials: source.has_credentials,
    host_key_fingerprint: source.host_key_fingerprint ?? null,
    status: {
      revision_applied: status.revision_applied ?? null,
      last_plan: plan
        ? { revision: plan.revision ?? null, plan_hash: plan.plan_hash ?? null, create: plan.create, update: plan.update, delete: plan.delete, unchanged: plan.unchanged, errors: plan.problems, error_count: plan.error_count, at: plan.at.toISOString() }
        : null,
      last_error: error ? { code: error.code, message: error.message, at: error.at.toISOString(), revision: error.revision ?? null } : null,
      synced_at: iso(status.synced_at),
      drift: (status.drift ?? []).map((d) => ({ kind: d.kind, name: d.name, path: d.path, forced_at: d.forced_at ?? null, forced_by: d.forced_by ?? null })),
      offered_host_key: status.offered_host_key ? { key: status.offered_host_key.key, fingerprint: status.offered_host_key.fingerprint } : null,
    },
    created_at: source.createdAt.toISOString(),
    updated_at: source.updatedAt.toISOString(),
  };
}
