import { Router } from 'express';
import type { Types } from 'mongoose';
import { principalOf } from '../http/auth';
import { assertMayIssueScopes, assertMayRevokeToken, requireEverywhere } from '../access/gate';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { validate } from '../http/validation';
import { OrganizationModel } from '../../domain/organizations/model';
import { parseDuration } from '../../domain/time/durations';
import { createTokenIn, revokeTokenById, tokensOf, TokenError, type Principal } from '../../domain/tokens/service';
import { identityRef } from '../../domain/access/identities';
import { IdentityModel } from '../../domain/access/model';
import type { Scope } from '../../domain/access/scopes';
import { createTokenSchema, type CreateTokenInput } from './schemas';
import { toTokenViews } from './views';

/**
 * A new token of an identity of the caller's organization; the value is in this one answer. Its
 * scopes may narrow the identity's rights, and never reach past the calling token's own.
 */
export async function issueToken(principal: Principal, identity: { _id: Types.ObjectId; type: string; name: string }, input: CreateTokenInput) {
  const scopes: Scope[] = input.scopes ?? ['admin'];
  assertMayIssueScopes(principal, scopes);
  const organization = await OrganizationModel.findById(principal.organizationId, { slug: 1 }).lean();
  if (!organization) throw notFound('Organization');
  try {
    const created = await createTokenIn(organization, {
      name: input.name,
      scopes,
      expiresInSeconds: input.expires_in === null ? undefined : parseDuration(input.expires_in),
      identityId: identity._id,
    });
    const [view] = await toTokenViews([{ ...created, identity: identityRef(identity as Parameters<typeof identityRef>[0]) }], principal.tokenId);
    return { ...view!, token: created.token };
  } catch (error) {
    if (error instanceof TokenError) throw new ApiError('conflict', error.message);
    throw error;
  }
}

/**
 * API tokens: an identity makes its own (`POST /tokens`), administrators list and revoke the
 * organization's; anyone revokes their own. The same operations as `bosun tokens`, in the caller's organization.
 */
export function tokenRoutes(): Router {
  const router = Router();

  router.get('/', requireEverywhere('admin'), async (req, res) => {
    const principal = principalOf(req);
    const tokens = await tokensOf(principal.organizationId);
    res.json({ data: await toTokenViews(tokens, principal.tokenId) });
  });

  router.post('/', async (req, res) => {
    const principal = principalOf(req);
    const input = validate(createTokenSchema, req.body);
    const identity = await IdentityModel.findById(principal.identity.id, { type: 1, name: 1 }).lean();
    if (!identity) throw notFound('Identity');
    // The one answer that carries a token's value: never stored by a cache on the way.
    res.status(201).set('Cache-Control', 'no-store').json({ data: await issueToken(principal, identity, input) });
  });

  router.delete('/:id', async (req, res) => {
    const id = parseId(req.params.id as string, 'Token').toString();
    const principal = principalOf(req);
    await assertMayRevokeToken(principal, id);
    const token = await revokeTokenById(principal.organizationId, id);
    if (!token) throw notFound('Token');
    const [view] = (await tokensOf(principal.organizationId, token.identity_id ?? undefined)).filter((t) => t.id === token.id);
    res.json({ data: (await toTokenViews([view ?? { ...token, identity: null }], principal.tokenId))[0] });
  });

  return router;
}
