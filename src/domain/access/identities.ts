import { Types } from 'mongoose';
import { batcher } from '../batch';
import { isDuplicateKey } from '../database';
import { IdentityModel, RoleBindingModel, TeamModel, type Identity } from './model';
import { toGrant, type Grant } from './grants';
import type { Role } from './roles';

export type IdentityType = 'person' | 'service_account';

/** An identity as the API names it. */
export interface IdentityRef {
  type: IdentityType;
  id: string;
  name: string;
}

export const identityRef = (identity: Pick<Identity, '_id' | 'type' | 'name'>): IdentityRef => ({
  type: identity.type as IdentityType,
  id: identity._id.toString(),
  name: identity.name,
});

/** "alice (person)", "ci-web (service account)": how a run's `triggered_by` reads. */
export const actorLine = (identity: Pick<IdentityRef, 'type' | 'name'>) => `${identity.name} (${identity.type === 'person' ? 'person' : 'service account'})`;

/** What acts on a request: the identity, the teams it is in, and the grants of both. */
export interface IdentityAccess {
  identity: IdentityRef;
  disabled: boolean;
  teams: { id: string; name: string }[];
  grants: Grant[];
}

/** Identities and their grants, looked up for concurrent requests together (three queries per batch). */
const accessOf = batcher(async (ids: string[]): Promise<(IdentityAccess | Error)[]> => {
  const unique = [...new Set(ids)].map((id) => new Types.ObjectId(id));
  const [identities, teams] = await Promise.all([
    IdentityModel.find({ _id: { $in: unique } }, { type: 1, name: 1, organization_id: 1, disabled_at: 1 }).lean(),
    TeamModel.find({ members: { $in: unique } }, { name: 1, members: 1, organization_id: 1 }).lean(),
  ]);
  const bindings = await RoleBindingModel.find({ 'subject.id': { $in: [...unique, ...teams.map((t) => t._id)] } }).lean();
  return ids.map((id) => {
    const identity = identities.find((i) => i._id.toString() === id);
    if (!identity) return new Error(`No identity ${id}`);
    const own = teams.filter((t) => t.organization_id.equals(identity.organization_id) && t.members.some((m) => m.toString() === id));
    const subjects = new Set([id, ...own.map((t) => t._id.toString())]);
    return {
      identity: identityRef(identity),
      disabled: identity.disabled_at !== null && identity.disabled_at !== undefined,
      teams: own.map((t) => ({ id: t._id.toString(), name: t.name })),
      grants: bindings.filter((b) => b.organization_id.equals(identity.organization_id) && subjects.has(b.subject.id.toString())).map(toGrant),
    };
  });
});

/** The identity, teams and grants behind a token or session, or null when the identity is gone. */
export async function identityAccess(identityId: string): Promise<IdentityAccess | null> {
  try {
    return await accessOf(identityId);
  } catch {
    return null;
  }
}

/** Finds or creates an identity of a type and name in an organization; safe when two callers race. */
async function ensureIdentity(organizationId: Types.ObjectId, type: IdentityType, name: string) {
  const filter = { organization_id: organizationId, type, name };
  try {
    return await IdentityModel.findOneAndUpdate(filter, { $setOnInsert: filter }, { upsert: true, returnDocument: 'after' }).lean().orFail();
  } catch (error) {
    if (isDuplicateKey(error)) return IdentityModel.findOne(filter).lean().orFail();
    throw error;
  }
}

/** Gives roles organization-wide to a subject, each once (a binding already there is kept as it is). */
async function bindOrganizationWide(organizationId: Types.ObjectId, subject: { type: IdentityType; id: Types.ObjectId }, roles: Role[]) {
  for (const role of roles) {
    const filter = { organization_id: organizationId, role, 'subject.type': subject.type, 'subject.id': subject.id, server_tags: null, deployments: null, max_targets_per_run: null };
    await RoleBindingModel.updateOne(filter, { $setOnInsert: { organization_id: organizationId, role, subject, server_tags: null, deployments: null, max_targets_per_run: null } }, { upsert: true });
  }
}

/**
 * The service account of a name with at least `roles` organization-wide: how `bosun tokens create`
 * and an older version's tokens (known only by name and scopes) find their identity.
 */
export async function ensureServiceAccount(organizationId: Types.ObjectId, name: string, roles: Role[]) {
  const account = await ensureIdentity(organizationId, 'service_account', name);
  await bindOrganizationWide(organizationId, { type: 'service_account', id: account._id }, roles);
  return account;
}

/** The first start's person `admin`, with role admin. */
export async function ensureAdminPerson(organizationId: Types.ObjectId) {
  const person = await ensureIdentity(organizationId, 'person', 'admin');
  await bindOrganizationWide(organizationId, { type: 'person', id: person._id }, ['admin']);
  return person;
}
