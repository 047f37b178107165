import { createHash } from 'node:crypto';
import type { Types } from 'mongoose';
import { isDuplicateKey } from '../database';
import { IdentityModel, TeamModel } from './model';

/** What the provider says about a person who signed in. */
export interface OidcClaims {
  subject: string;
  name: string | null;
  email: string | null;
  groups: string[];
}

/** A name for a new person: the provider's, or their address, or their subject. */
const nameOf = (claims: OidcClaims) => (claims.name ?? claims.email ?? claims.subject).trim().slice(0, 100) || claims.subject;

/**
 * The person of an organization the provider knows by `subject`; created when allowed. A person of
 * the same name who signed in otherwise is never taken over: the new one gets a name of its own.
 */
export async function personOfSubject(organizationId: Types.ObjectId, claims: OidcClaims, create: boolean) {
  const found = await IdentityModel.findOne({ organization_id: organizationId, type: 'person', oidc_subject: claims.subject }).lean();
  if (found || !create) return found;
  const base = nameOf(claims);
  const suffix = createHash('sha256').update(claims.subject).digest('hex').slice(0, 6);
  for (const name of [base, `${base}-${suffix}`]) {
    try {
      const created = await IdentityModel.create({ organization_id: organizationId, type: 'person', name, email: claims.email, oidc_subject: claims.subject });
      return created.toObject();
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      // The same subject's first sign-in in two tabs at once: the other one made them.
      const raced = await IdentityModel.findOne({ organization_id: organizationId, type: 'person', oidc_subject: claims.subject }).lean();
      if (raced) return raced;
    }
  }
  throw new Error(`No free name for the person of subject ${claims.subject}`);
}

/**
 * The person's membership of the organization's teams mapped to provider groups follows the groups
 * claim: in every such team one of whose groups they have, out of the others. Teams mapped to no
 * group are managed in Bosun only and left as they are.
 */
export async function syncTeamsOfGroups(organizationId: Types.ObjectId, personId: Types.ObjectId, groups: string[]) {
  const mapped = { organization_id: organizationId, 'oidc_groups.0': { $exists: true } };
  await TeamModel.updateMany({ ...mapped, oidc_groups: { $in: groups } }, { $addToSet: { members: personId } });
  await TeamModel.updateMany({ ...mapped, oidc_groups: { $nin: groups }, members: personId }, { $pull: { members: personId } });
}
