import type { SecretBox } from './secret-box';
import { OrganizationSecretModel, secretAssociatedData } from './model';

/*
 * `${secret:NAME}`: a value kept in config files (issue 38) that stands for an organization secret.
 * It is stored as written and shown as written; only where the value is used is it resolved.
 */

export const SECRET_REFERENCE = /^\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;

/** The secret a value names, or null when it is a plain value. */
export const secretReferenceName = (value: string | null | undefined): string | null => (value ? (SECRET_REFERENCE.exec(value)?.[1] ?? null) : null);

/** Thrown when a reference names a secret the organization no longer has. */
export class MissingSecretError extends Error {
  constructor(readonly secret: string) {
    super(`no organization secret named "${secret}" (PUT /api/v1/secrets/${secret})`);
  }
}

/** Each value that is a reference, replaced by its secret's value. */
export async function resolveSecretReferences<T extends { value: string }>(organizationId: string, values: readonly T[], box: SecretBox): Promise<T[]> {
  const wanted = [...new Set(values.flatMap((v) => secretReferenceName(v.value) ?? []))];
  if (!wanted.length) return [...values];
  const found = await OrganizationSecretModel.find({ organization_id: organizationId, name: { $in: wanted } }).select('+value').lean();
  const opened = new Map(found.map((s) => [s.name, box.decrypt(s.value, secretAssociatedData(organizationId, s.name))]));
  return values.map((v) => {
    const name = secretReferenceName(v.value);
    if (name === null) return v;
    const value = opened.get(name);
    if (value === undefined) throw new MissingSecretError(name);
    return { ...v, value };
  });
}
