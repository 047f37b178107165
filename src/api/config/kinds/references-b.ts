import type { z } from 'zod';
import type { CheckedSpec, ManagedBy, NameIndex, ReferenceKind, SpecPath, SpecProblem } from '../../../domain/config/types';
import { secretReferenceName } from '../../../domain/secrets/references';
import { ApiError } from '../../http/errors';
import { assertAnAdminRemains, type PendingChange } from '../../people/admins';

/*
 * What the adapters of Freeze, Policy, Team, ServiceAccount, RoleBinding and NotificationChannel share:
 * zod's issues and the API's 422 details as a spec's problems, references by name, `${secret:NAME}`.
 */

/** zod's issues as problems at their paths, in the API's words. */
export function schemaProblems(error: z.ZodError): SpecProblem[] {
  return error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? { path: issue.path as SpecPath, message: `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` }
      : { path: issue.path as SpecPath, message: issue.message },
  );
}

/** A 422 of the API's own rules (thrown by the functions its service runs) as problems; anything else is thrown on. */
export function ruleProblems(error: unknown): SpecProblem[] {
  if (error instanceof ApiError && error.code === 'validation_failed' && error.details?.length) {
    return error.details.map((d) => ({ path: d.path.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part)), message: d.message }));
  }
  throw error;
}

/** A checked spec from what was found: canonical when there is no problem. */
export const checked = (problems: SpecProblem[], canonical: () => Record<string, unknown>): CheckedSpec =>
  problems.length ? { spec: null, problems } : { spec: canonical(), problems: [] };

const WHAT: Partial<Record<ReferenceKind, string>> = {
  Deployment: 'deployment',
  Team: 'team',
  ServiceAccount: 'service account',
  Person: 'person',
};

/** The id a name refers to, or the problem at `path` saying why there is none. */
export function resolve(names: NameIndex, kind: ReferenceKind, name: string, path: SpecPath, problems: SpecProblem[]): string | null {
  const id = names.idOf(kind, name);
  if (id) return id;
  const ambiguous = (names as Partial<{ ambiguous(kind: ReferenceKind, name: string): boolean }>).ambiguous?.(kind, name);
  const what = WHAT[kind] ?? kind;
  if (kind === 'Person') problems.push({ path, message: ambiguous ? `two people have the email or name "${name}": give their email` : `no person with the email or name "${name}" in the organization` });
  else problems.push({ path, message: ambiguous ? `two ${what}s are named "${name}"` : `no ${what} named "${name}" (in the files or the organization)` });
  return null;
}

/** The names of ids, each as the index knows it (an id it does not know is kept as the id: never silently dropped). */
export const namesOf = (names: NameIndex, kind: ReferenceKind, ids: readonly unknown[]) => ids.map((id) => names.nameOf(kind, String(id)) ?? String(id));

/** A value that must be secret: a reference to a secret the organization has, else the problem at `path`. */
export function checkSecretReference(value: string, secrets: ReadonlySet<string>, path: SpecPath, plain: string, problems: SpecProblem[]): void {
  const name = secretReferenceName(value);
  if (name === null) problems.push({ path, message: plain });
  else if (!secrets.has(name)) problems.push({ path, message: `no secret named "${name}" in the organization (PUT /api/v1/secrets/${name})` });
}

interface StoredManagedBy {
  source: string;
  revision?: string | null;
  path: string;
  url?: string | null;
  applied_at: Date;
  spec_hash: string;
  forced_at?: Date | null;
  forced_by?: string | null;
}

/** `managed_by` as stored (null: made through another path). */
export const managedByOf = (stored: StoredManagedBy | null | undefined): ManagedBy | null =>
  stored ? { source: stored.source, revision: stored.revision ?? null, path: stored.path, url: stored.url ?? null, applied_at: stored.applied_at, spec_hash: stored.spec_hash, forced_at: stored.forced_at ?? null, forced_by: stored.forced_by ?? null } : null;

/** Why a removal would leave the organization without an administrator (the API's own refusal), or null. */
export async function lastAdminBlocker(organizationId: string, change: PendingChange): Promise<string | null> {
  try {
    await assertAnAdminRemains(organizationId, change);
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
}
