import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { batcher } from '../batch';
import { ensureOrganization, OrganizationModel } from '../organizations/model';
import { ApiTokenModel, type ApiToken } from './model';
import type { Types } from 'mongoose';
import { isScope, SCOPES, type Scope } from '../access/scopes';
import { isDuplicateKey } from '../database';
import { ensureAdminPerson, ensureServiceAccount, identityAccess, identityRef, type IdentityRef } from '../access/identities';
import { actorLine } from '../access/actor';
import { IdentityModel } from '../access/model';
import type { Grant } from '../access/grants';
import { rolesOfScopes } from '../access/roles';

const TOKEN_PREFIX = 'bsn_';
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// Writing last_used_at on every request would turn reads into writes; once a minute is enough.
const LAST_USED_RESOLUTION_MS = 60_000;

export class TokenError extends Error {
  override name = 'TokenError';
}

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const prefixOf = (token: string) => token.slice(0, TOKEN_PREFIX.length + 6);

export function parseScopes(list: string): Scope[] {
  const scopes = [...new Set(list.split(',').map((s) => s.trim()).filter(Boolean))];
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new TokenError(`Unknown scope(s): ${unknown.join(', ')}. Known scopes: ${SCOPES.join(', ')}`);
  if (!scopes.length) throw new TokenError('At least one scope is required');
  return scopes as Scope[];
}

/**
 * `bosun tokens create`: a token for the service account of the same name (created, or reused, with
 * the roles its scopes mean organization-wide); returns its plaintext, which exists nowhere else
 * afterwards: only its SHA-256 is stored.
 */
export async function createToken(input: { org: string; name: string; scopes: Scope[]; expiresInSeconds?: number }) {
  if (!TOKEN_NAME_PATTERN.test(input.name)) {
    throw new TokenError(`Invalid token name "${input.name}": letters, digits, dot, dash and underscore, at most 64`);
  }
  const organization = await ensureOrganization(input.org);
  const account = await ensureServiceAccount(organization._id, input.name, rolesOfScopes(input.scopes));
  return createTokenIn(organization, { ...input, identityId: account._id });
}

/** A new token of an identity of an existing organization (its name already checked); the plaintext is in the answer only. */
export async function createTokenIn(
  organization: { _id: Types.ObjectId; slug: string },
  input: { name: string; scopes: Scope[]; expiresInSeconds?: number; identityId: Types.ObjectId },
) {
  const plaintext = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  try {
    const doc = await ApiTokenModel.create({
      organization_id: organization._id,
      name: input.name,
      identity_id: input.identityId,
      active_name: input.name,
      token_hash: hashToken(plaintext),
      prefix: prefixOf(plaintext),
      scopes: input.scopes,
      expires_at: input.expiresInSeconds ? new Date(Date.now() + input.expiresInSeconds * 1000) : null,
    });
    return { ...toTokenListing(doc.toObject()), token: plaintext, organization: organization.slug };
  } catch (error) {
    if (isDuplicateKey(error)) {
      throw new TokenError(`Organization "${organization.slug}" already has an active token named "${input.name}"`);
    }
    throw error;
  }
}

/** A token as its organization's administrators see it: never its value or hash. */
export const toTokenListing = (t: ApiToken) => ({
  id: t._id.toString(),
  name: t.name,
  identity_id: t.identity_id?.toString() ?? null,
  prefix: t.prefix,
  scopes: t.scopes,
  created_at: t.createdAt,
  last_used_at: t.last_used_at ?? null,
  expires_at: t.expires_at ?? null,
  revoked_at: t.revoked_at ?? null,
});

/** An organization's tokens (or one identity's), revoked ones included, oldest first, each with its identity. */
export async function tokensOf(organizationId: Types.ObjectId | string, identityId?: string) {
  const tokens = await ApiTokenModel.find({ organization_id: organizationId, ...(identityId ? { identity_id: identityId } : {}) }).sort({ createdAt: 1, _id: 1 }).lean();
  const identities = await IdentityModel.find({ _id: { $in: tokens.map((t) => t.identity_id) } }, { type: 1, name: 1 }).lean();
  return tokens.map((t) => {
    const identity = identities.find((i) => t.identity_id?.equals(i._id));
    return { ...toTokenListing(t), identity: identity ? identityRef(identity) : null };
  });
}

export async function listTokens(org: string) {
  const organization = await OrganizationModel.findOne({ slug: org });
  if (!organization) throw new TokenError(`No organization "${org}"`);
  return tokensOf(organization._id);
}

export async function revokeToken(org: string, name: string) {
  const organization = await OrganizationModel.findOne({ slug: org });
  if (!organization) throw new TokenError(`No organization "${org}"`);
  const result = await ApiTokenModel.updateOne(
    { organization_id: organization._id, active_name: name },
    { $set: { revoked_at: new Date() }, $unset: { active_name: 1 } },
  );
  if (result.modifiedCount === 0) throw new TokenError(`Organization "${org}" has no active token named "${name}"`);
}

/**
 * Revokes one of an organization's tokens by id: the token, or null when the organization has no such
 * token. Revoking a revoked token changes nothing and answers it as it is.
 */
export async function revokeTokenById(organizationId: string, tokenId: string) {
  const revoked = await ApiTokenModel.findOneAndUpdate(
    { _id: tokenId, organization_id: organizationId, revoked_at: null },
    { $set: { revoked_at: new Date() }, $unset: { active_name: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (revoked) return toTokenListing(revoked);
  const existing = await ApiTokenModel.findOne({ _id: tokenId, organization_id: organizationId }).lean();
  return existing ? toTokenListing(existing) : null;
}

/** Who acts on a request, with what rights: an identity's grants, narrowed by its token's scopes. */
export interface Principal {
  organizationId: string;
  identity: IdentityRef;
  teams: { id: string; name: string }[];
  grants: readonly Grant[];
  /** null: a console session of a person signed in through OpenID Connect, with no token. */
  tokenId: string | null;
  tokenName: string | null;
  /** The console session it acts in (its cookie); null for a bearer token or a schedule's tick. */
  sessionId: string | null;
  /** The token's scopes; a session without a token has `admin`, which narrows nothing. */
  scopes: string[];
  expiresAt: Date | null;
}

/** How a run or a decision records who did it. */
export const actorOf = (principal: Principal) => ({ ...principal.identity, token_id: principal.tokenId, session_id: principal.sessionId });
export const actorLineOf = (principal: Principal) => actorLine(principal.identity);
/** What a run's `triggered_by` (a conversation's `created_by`) stores: the token's name when one was used, else the actor's line. */
export const recordedByOf = (principal: Principal) => principal.tokenName ?? actorLineOf(principal);

/** Why a presented token is not accepted. */
export type Rejection = 'unknown' | 'expired' | 'disabled';

/** The unrevoked tokens with a prefix; concurrent requests' lookups share one query. */
const tokensByPrefix = batcher(async (prefixes: string[]) => {
  const found = await ApiTokenModel.find({ prefix: { $in: [...new Set(prefixes)] }, revoked_at: null }).lean();
  return prefixes.map((prefix) => found.filter((token) => token.prefix === prefix));
});

/**
 * The principal behind a presented token, or why there is none. Candidates are found by the token's
 * (non-secret) prefix and their hashes compared in constant time, so response times say nothing
 * about how much of a guessed hash matched.
 */
export async function authenticateToken(plaintext: string): Promise<Principal | Rejection> {
  const presented = Buffer.from(hashToken(plaintext), 'hex');
  const candidates = await tokensByPrefix(prefixOf(plaintext));
  const token = candidates.find((c) => {
    const stored = Buffer.from(c.token_hash, 'hex');
    return stored.length === presented.length && timingSafeEqual(stored, presented);
  });
  if (!token) return 'unknown';
  return principalOfToken(token);
}

/** An identity of `type` acting without a token: its own grants, narrowed by nothing; or why it no longer acts. */
async function tokenlessPrincipal(identityId: string, type: 'person' | 'service_account'): Promise<Principal | Rejection> {
  const access = await identityAccess(identityId);
  if (!access || access.identity.type !== type) return 'unknown';
  if (access.disabled) return 'disabled';
  return {
    organizationId: access.organizationId,
    identity: access.identity,
    teams: access.teams,
    grants: access.grants,
    tokenId: null,
    tokenName: null,
    sessionId: null,
    scopes: ['admin'],
    expiresAt: null,
  };
}

/** The principal of a person signed in without a token (OpenID Connect). */
export const authenticateIdentity = (identityId: string) => tokenlessPrincipal(identityId, 'person');

/** A service account acting by itself, with no token: a schedule's tick. */
export const actAsServiceAccount = (identityId: string) => tokenlessPrincipal(identityId, 'service_account');

/** The principal of a token known by id (a console session's), or why it no longer acts. */
export async function authenticateTokenId(tokenId: string): Promise<Principal | Rejection> {
  const token = await ApiTokenModel.findOne({ _id: tokenId, revoked_at: null }).lean();
  return token ? principalOfToken(token) : 'unknown';
}

async function principalOfToken(token: ApiToken): Promise<Principal | Rejection> {
  const now = new Date();
  if (token.expires_at && token.expires_at <= now) return 'expired';
  const access = token.identity_id ? await identityAccess(token.identity_id.toString()) : null;
  if (!access) return 'unknown';
  if (access.disabled) return 'disabled';
  if (!token.last_used_at || now.getTime() - token.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await ApiTokenModel.updateOne({ _id: token._id }, { $set: { last_used_at: now } });
  }
  return {
    organizationId: token.organization_id.toString(),
    identity: access.identity,
    teams: access.teams,
    grants: access.grants,
    tokenId: token._id.toString(),
    tokenName: token.name,
    sessionId: null,
    scopes: token.scopes,
    expiresAt: token.expires_at ?? null,
  };
}

/**
 * While no token exists at all, creates organization `default`, its person `admin` (role admin) and
 * their token `admin`; returns its plaintext once.
 */
export async function bootstrapFirstToken(): Promise<string | null> {
  if ((await ApiTokenModel.estimatedDocumentCount()) > 0) return null;
  try {
    const organization = await ensureOrganization('default');
    const admin = await ensureAdminPerson(organization._id);
    const created = await createTokenIn(organization, { name: 'admin', scopes: ['admin'], identityId: admin._id });
    return created.token;
  } catch (error) {
    // Another process bootstrapped at the same moment.
    if (error instanceof TokenError) return null;
    throw error;
  }
}

/**
 * Tokens made by an older version belong to no identity: each becomes the token of a service account
 * of its name with the roles its scopes mean (its scopes still narrow it: nothing gains access).
 * Run at start, before requests are served; a second run finds nothing to do.
 */
export async function adoptTokensWithoutIdentity(): Promise<number> {
  const orphans = await ApiTokenModel.find({ identity_id: { $exists: false } }).lean();
  for (const token of orphans) {
    const account = await ensureServiceAccount(token.organization_id, token.name, rolesOfScopes(token.scopes.filter(isScope)));
    await ApiTokenModel.updateOne({ _id: token._id, identity_id: { $exists: false } }, { $set: { identity_id: account._id } });
  }
  return orphans.length;
}

/**
 * A refused token that exists (revoked, expired, its identity disabled): whose it is, so its refusal
 * goes in its organization's audit trail. A token that matches nothing belongs to nobody: null.
 */
export async function ownerOfRefusedToken(plaintext: string): Promise<{ tokenId: string; organizationId: string; identity: IdentityRef | null } | null> {
  const token = await ApiTokenModel.findOne({ prefix: prefixOf(plaintext), token_hash: hashToken(plaintext) }, { organization_id: 1, identity_id: 1 }).lean();
  if (!token) return null;
  const identity = token.identity_id ? await IdentityModel.findById(token.identity_id, { type: 1, name: 1 }).lean() : null;
  return { tokenId: token._id.toString(), organizationId: token.organization_id.toString(), identity: identity ? identityRef(identity as never) : null };
}
