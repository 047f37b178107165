import { Router } from 'express';
import { principalOf, requireScope } from '../http/auth';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { validate } from '../http/validation';
import { OrganizationModel } from '../../domain/organizations/model';
import { createTokenIn, parseDuration, revokeTokenById, tokensOf, TokenError } from '../../domain/tokens/service';
import { createTokenSchema } from './schemas';
import { toTokenView } from './views';

/**
 * The organization's API tokens, for its administrators: create (the value is in that one answer),
 * list (never values), revoke. The same operations as `bosun tokens`, scoped to the caller's organization.
 */
export function tokenRoutes(): Router {
  const router = Router();

  router.get('/', requireScope('admin'), async (req, res) => {
    const principal = principalOf(req);
    const tokens = await tokensOf(principal.organizationId);
    res.json({ data: tokens.map((t) => toTokenView(t, principal.tokenId)) });
  });

  router.post('/', requireScope('admin'), async (req, res) => {
    const principal = principalOf(req);
    const input = validate(createTokenSchema, req.body);
    const organization = await OrganizationModel.findById(principal.organizationId, { slug: 1 }).lean();
    if (!organization) throw notFound('Organization');
    try {
      const created = await createTokenIn(organization, {
        name: input.name,
        scopes: input.scopes,
        expiresInSeconds: input.expires_in === null ? undefined : parseDuration(input.expires_in),
      });
      // The one answer that carries a token's value: never stored by a cache on the way.
      res.status(201).set('Cache-Control', 'no-store').json({ data: { ...toTokenView(created, principal.tokenId), token: created.token } });
    } catch (error) {
      if (error instanceof TokenError) throw new ApiError('conflict', error.message);
      throw error;
    }
  });

  router.delete('/:id', requireScope('admin'), async (req, res) => {
    const id = parseId(req.params.id as string, 'Token').toString();
    const principal = principalOf(req);
    const token = await revokeTokenById(principal.organizationId, id);
    if (!token) throw notFound('Token');
    res.json({ data: toTokenView(token, principal.tokenId) });
  });

  return router;
}
