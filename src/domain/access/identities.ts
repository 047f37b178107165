import { Types } from 'mongoose';
import { batcher } from '../batch';
import { isDuplicateKey } from '../database';
import { IdentityModel, RoleBindingModel, TeamModel, type Identity, type RoleBinding } from './model';
import type { Grant } from './grants';
import { KEEP_MS, kept, keptState } from './cache';
import { ROLE_ACTIONS, type Role } from './roles';

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

/** What acts on a request: the identity, the teams it is in, and the grants of both. */
export interface IdentityAccess {
  identity: IdentityRef;
  organizationId: string;
  disabled: boolean;
  teams: { id: string; name: string }[];
  grants: Grant[];
}

type IdentityDoc = Pick<Identity, '_id' | 'type' | 'name' | 'organization_id' | 'disabled_at'>;

/** Identities, looked up for concurrent requests together: always read, so a disabled one stops at once. */
const identitiesById = batcher(async (ids: string[]): Promise<(IdentityDoc | null)[]> => {
  // The driver's own find: on every request, mongoose's casting and hydration would cost more than the query.
  const found = (await IdentityModel.collection
    .find({ _id: { $in: [...new Set(ids)].map((id) => new Types.ObjectId(id)) } }, { projection: { type: 1, name: 1, organization_id: 1, disabled_at: 1 } })
    .toArray()) as unknown as IdentityDoc[];
  return ids.map((id) => found.find((i) => i._id.toString() === id) ?? null);
});

/** A role binding made ready to check (a Grant): its actions as a set, its limits as they are checked. */
const toGrant = (binding: Pick<RoleBinding, 'role' | 'server_tags' | 'deployments' | 'max_targets_per_run'>): Grant => ({
  role: binding.role as Role,
  actions: new Set(ROLE_ACTIONS[binding.role as Role]),
  tags: binding.server_tags ?? null,
  deployments: binding.deployments ? new Set(binding.deployments.map(String)) : null,
  maxTargets: binding.max_targets_per_run ?? null,
});

/** The teams and grants of identities not kept: two queries for the requests of the moment. */
const grantsOf = batcher(async (identities: IdentityDoc[]): Promise<{ teams: IdentityAccess['teams']; grants: Grant[] }[]> => {
  const ids = [...new Set(identities.map((i) => i._id.toString()))].map((id) => new Types.ObjectId(id));
  const teams = await TeamModel.find({ members: { $in: ids } }, { name: 1, members: 1, organization_id: 1 }).lean();
  const bindings = await RoleBindingModel.find({ 'subject.id': { $in: [...ids, ...teams.map((t) => t._id)] } }).lean();
  return identities.map((identity) => {
    const id = identity._id.toString();
    const own = teams.filter((t) => t.organization_id.equals(identity.organization_id) && t.members.some((m) => m.toString() === id));
    const subjects = new Set([id, ...own.map((t) => t._id.toString())]);
    return {
      teams: own.map((t) => ({ id: t._id.toString(), name: t.name })),
      grants: bindings.filter((b) => b.organization_id.equals(identity.organization_id) && subjects.has(b.subject.id.toString())).map(toGrant),
    };
  });
});

/** The identity, teams and grants behind a token or session, or null when the identity is gone. */
export async function identityAccess(identityId: string): Promise<IdentityAccess | null> {
  const identity = await identitiesById(identityId);
  if (!identity) return null;
  const base = { identity: identityRef(identity), organizationId: identity.organization_id.toString(), disabled: !!identity.disabled_at };
  const hit = keptState.listening ? kept.get(identityId) : undefined;
  if (hit && Date.now() - hit.at < KEEP_MS) return { ...base, teams: hit.teams, grants: hit.grants };
  const before = keptState.generation;
  const { teams, grants } = await grantsOf(identity);
  if (keptState.listening && before === keptState.generation) kept.set(identityId, { at: Date.now(), teams, grants });
  return { ...base, teams, grants };
}

/** One who may hold rights in an organization: a person (enabled) with its own and its teams' grants, or a team with its own and its members. */
export interface SubjectGrants {
  id: string;
  name: string;
  grants: Grant[];
}

/**
 * An organization's people (enabled ones: a disabled person acts no more) with their own grants and
 * their teams', and its teams with their own and their members: what "who may do this" is asked of.
 */
export async function organizationGrants(organizationId: string): Promise<{ people: SubjectGrants[]; teams: Array<SubjectGrants & { members: string[] }> }> {
  const organization_id = new Types.ObjectId(organizationId);
  const [people, teams, bindings] = await Promise.all([
    IdentityModel.find({ organization_id, type: 'person', disabled_at: null }, { name: 1 }).lean(),
    TeamModel.find({ organization_id }, { name: 1, members: 1 }).lean(),
    RoleBindingModel.find({ organization_id, 'subject.type': { $in: ['person', 'team'] } }).lean(),
  ]);
  const grantsOfSubjects = (ids: Set<string>) => bindings.filter((b) => ids.has(b.subject.id.toString())).map(toGrant);
  return {
    people: people.map((person) => {
      const id = person._id.toString();
      const own = teams.filter((t) => t.members.some((m) => m.toString() === id)).map((t) => t._id.toString());
      return { id, name: person.name, grants: grantsOfSubjects(new Set([id, ...own])) };
    }),
    teams: teams.map((team) => ({ id: team._id.toString(), name: team.name, members: team.members.map(String), grants: grantsOfSubjects(new Set([team._id.toString()])) })),
  };
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
