import express, { Router, type Request, type Response } from 'express';
import { authenticateToken, ownerOfRefusedToken } from '../../domain/tokens/service';
import { principalActor, recordSignIn } from './audit';
import { OrganizationModel } from '../../domain/organizations/model';
import { closeSession, csrfTokenOf, openSession, type SessionLifetime } from '../../domain/sessions/store';
import type { ConsoleSession } from '../../domain/sessions/model';
import type { Principal } from '../../domain/tokens/service';
import { authenticate, principalOf, refusal, SESSION_COOKIE } from '../http/auth';
import { ApiError } from '../http/errors';
import { validate } from '../http/validation';
import { rightsOf } from '../access/gate';
import { signInSchema, type SessionView } from './schemas';
import { oidcRoutes, type SignInSettings } from './oidc-routes';
import type { Logger } from '../../logger';

async function sessionView(principal: Principal, session: ConsoleSession, secret: string, lifetime: SessionLifetime): Promise<SessionView> {
  const organization = await OrganizationModel.findById(principal.organizationId, { slug: 1 }).lean();
  return {
    organization: organization?.slug ?? '',
    identity: principal.identity,
    token_name: principal.tokenName,
    scopes: principal.scopes,
    rights: rightsOf(principal),
    csrf_token: csrfTokenOf(secret),
    idle_seconds: lifetime.idleSeconds,
    expires_at: session.expires_at.toISOString(),
  };
}

const cookieOptions = (req: Request) => ({ httpOnly: true, sameSite: 'strict' as const, secure: req.secure, path: '/' });

/**
 * The console's sign-in: an API token is exchanged for a session held in an HttpOnly, SameSite=Strict
 * cookie (Secure over TLS). The session acts with its token's organization and scopes. With an
 * OpenID Connect provider configured, a person may sign in through it instead (oidc-routes.ts).
 */
export function sessionRoutes(lifetime: SessionLifetime, signIn: SignInSettings, log: Logger): Router {
  const router = Router();
  router.use(oidcRoutes(signIn, lifetime, log));
  const authenticated = authenticate(lifetime);
  router.post('/', express.json({ limit: '4kb', strict: true }), async (req: Request, res: Response) => {
    if (!req.is('application/json')) throw new ApiError('unsupported_media_type', 'Send the request body as JSON with "Content-Type: application/json"');
    const { token } = validate(signInSchema, req.body);
    const principal = await authenticateToken(token);
    if (typeof principal === 'string') {
      const owner = await ownerOfRefusedToken(token);
      if (owner) {
        const actor = { ...(owner.identity ?? { type: 'system' as const, id: null, name: 'unknown' }), token_id: owner.tokenId, session_id: null };
        await recordSignIn(req, log, { organizationId: owner.organizationId, actor, outcome: 'unauthorized', method: 'token', target: { kind: 'token', id: owner.tokenId }, details: { reason: principal } });
      } else log.warn({ address: req.ip }, 'a console sign-in with a token that matches none was refused');
      throw refusal(principal, 'token');
    }
    const { secret, session } = await openSession(
      { tokenId: principal.tokenId, identityId: principal.identity.id, organizationId: principal.organizationId, expiresAt: principal.expiresAt },
      lifetime,
    );
    await recordSignIn(req, log, { organizationId: principal.organizationId, actor: principalActor(principal, session._id.toString()), outcome: 'ok', method: 'token' });
    res.cookie(SESSION_COOKIE, secret, { ...cookieOptions(req), expires: session.expires_at });
    res.status(201).json({ data: await sessionView(principal, session, secret, lifetime) });
  });
  router.get('/', authenticated, async (req, res) => {
    const held = req.consoleSession;
    if (!held) throw new ApiError('not_found', 'No console session: this request was authenticated by a bearer token');
    res.json({ data: await sessionView(principalOf(req), held.session, held.secret, lifetime) });
  });
  router.delete('/', authenticated, async (req, res) => {
    const held = req.consoleSession;
    if (!held) throw new ApiError('not_found', 'No console session: this request was authenticated by a bearer token');
    await closeSession(held.secret);
    await recordSignIn(req, log, {
      organizationId: principalOf(req).organizationId,
      actor: principalActor(principalOf(req), String(held.session._id)),
      outcome: 'ok',
      method: principalOf(req).tokenId ? 'token' : 'oidc',
      action: 'session.sign_out',
    });
    res.clearCookie(SESSION_COOKIE, cookieOptions(req));
    res.status(204).end();
  });
  return router;
}
