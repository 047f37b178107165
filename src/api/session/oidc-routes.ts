import { Router, type Request, type Response } from 'express';
import { OrganizationModel } from '../../domain/organizations/model';
import { personOfSubject, syncTeamsOfGroups } from '../../domain/access/oidc-people';
import { beginSignIn, PENDING_SIGN_IN_SECONDS, takeSignIn } from '../../domain/sessions/pending-sign-ins';
import { openSession, type SessionLifetime } from '../../domain/sessions/store';
import type { OidcConfig } from '../../config';
import type { Logger } from '../../logger';
import { cookieValue, SESSION_COOKIE } from '../http/auth';
import { oidcClient } from './oidc-client';
import { recordSignIn } from './audit';
import type { OidcClaims } from '../../domain/access/oidc-people';
import type { ProvidersView, SignInFailure } from './schemas';

/** The browser's key to its sign-in under way. */
const PENDING_COOKIE = 'bosun_oidc';
const PENDING_PATH = '/api/v1/session/oidc';
export const OIDC_CALLBACK_PATH = `${PENDING_PATH}/callback`;

export interface SignInSettings {
  oidc?: OidcConfig;
  /** The address browsers reach Bosun at; from each request's Host unless set. */
  publicUrl?: string;
}

/** Back to the sign-in page, which says why in its own words (a message in the URL could be anyone's). */
const toSignInPage = (res: Response, failure: SignInFailure) => res.redirect(303, `/sign-in?sso=${failure}`);

/**
 * Signing in through an OpenID Connect provider: the code flow with PKCE. The callback answers a
 * browser, so every outcome is a redirect: to the console, or back to the sign-in page saying why.
 */
export function oidcRoutes(settings: SignInSettings, lifetime: SessionLifetime, log: Logger): Router {
  const router = Router();
  const provider = settings.oidc ? oidcClient(settings.oidc) : undefined;
  const redirectUri = (req: Request) => `${settings.publicUrl ?? `${req.protocol}://${req.get('host')}`}${OIDC_CALLBACK_PATH}`;

  router.get('/providers', async (_req, res) => {
    const oidc = provider ? { name: provider.displayName, reachable: await provider.reachable(), sign_in_url: PENDING_PATH } : null;
    res.json({ data: { token: true, oidc } satisfies ProvidersView });
  });

  router.get('/oidc', async (req, res) => {
    if (!provider) return toSignInPage(res, 'not_configured');
    const uri = redirectUri(req);
    const authorization = await provider.authorization(uri).catch((err: Error) => {
      log.warn({ err: err.message }, 'the OpenID provider cannot be reached');
      return null;
    });
    if (!authorization) return toSignInPage(res, 'unreachable');
    const key = await beginSignIn({ ...authorization, redirectUri: uri });
    // SameSite=Lax: the provider's redirect back is a cross-site navigation, which a Strict cookie would miss.
    res.cookie(PENDING_COOKIE, key, { httpOnly: true, sameSite: 'lax', secure: req.secure, path: PENDING_PATH, maxAge: PENDING_SIGN_IN_SECONDS * 1000 });
    res.redirect(303, authorization.url.href);
  });

  router.get('/oidc/callback', async (req, res) => {
    res.clearCookie(PENDING_COOKIE, { httpOnly: true, sameSite: 'lax', secure: req.secure, path: PENDING_PATH });
    if (!provider || !settings.oidc) return toSignInPage(res, 'not_configured');
    const slug = settings.oidc.organization;
    const organization = await OrganizationModel.findOne({ slug }, { _id: 1 }).lean();
    // A refused sign-in: in the organization's audit trail, then back to the sign-in page saying why.
    const refuse = async (failure: SignInFailure, claims: OidcClaims | null = null, personId: string | null = null) => {
      if (organization) {
        const name = claims ? (claims.name ?? claims.email ?? claims.subject) : 'unknown';
        await recordSignIn(req, log, {
          organizationId: organization._id.toString(),
          actor: { type: 'person', id: personId, name, token_id: null, session_id: null },
          outcome: 'refused',
          method: 'oidc',
          details: { reason: failure, ...(claims ? { subject: claims.subject } : {}) },
        });
      }
      return toSignInPage(res, failure);
    };
    const key = cookieValue(req.headers.cookie, PENDING_COOKIE);
    const pending = key ? await takeSignIn(key) : null;
    if (!pending) return refuse('expired');
    if (typeof req.query.error === 'string') return refuse('denied');
    // The callback's own URL as the provider sent the browser to it: the registered redirect URI and the query.
    const callbackUrl = new URL(pending.redirectUri);
    callbackUrl.search = new URL(req.originalUrl, 'http://callback').search;
    const claims = await provider.claims(callbackUrl, pending).catch((err: Error) => {
      log.warn({ err: err.message }, 'an OpenID Connect sign-in was refused');
      return null;
    });
    if (!claims) return refuse('failed');
    if (!organization) {
      log.error({ organization: slug }, 'OIDC_ORGANIZATION names no organization');
      return toSignInPage(res, 'failed');
    }
    const person = await personOfSubject(organization._id, claims, settings.oidc.createPeople);
    if (!person) return refuse('unknown_person', claims);
    if (person.disabled_at) return refuse('disabled', claims, person._id.toString());
    await syncTeamsOfGroups(organization._id, person._id, claims.groups);
    const { secret, session } = await openSession(
      { tokenId: null, identityId: person._id.toString(), organizationId: organization._id.toString(), expiresAt: null },
      lifetime,
    );
    await recordSignIn(req, log, {
      organizationId: organization._id.toString(),
      actor: { type: 'person', id: person._id.toString(), name: person.name, token_id: null, session_id: session._id.toString() },
      outcome: 'ok',
      method: 'oidc',
      details: { subject: claims.subject },
    });
    res.cookie(SESSION_COOKIE, secret, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/', expires: session.expires_at });
    log.info({ person: person.name, groups: claims.groups.length }, 'a person signed in through OpenID Connect');
    res.redirect(303, '/');
  });
  return router;
}
