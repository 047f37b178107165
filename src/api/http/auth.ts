import type { Request, RequestHandler } from 'express';
import { authenticateIdentity, authenticateToken, authenticateTokenId, type Principal, type Rejection } from '../../domain/tokens/service';
import { closeSession, csrfTokenMatches, findSession, type SessionLifetime } from '../../domain/sessions/store';
import type { ConsoleSession } from '../../domain/sessions/model';
import { ApiError } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** Set when the request was authenticated by the console's session cookie, not a bearer token. */
    consoleSession?: { secret: string; session: ConsoleSession };
  }
}

/** The console's session cookie (HttpOnly: page scripts never see it). */
export const SESSION_COOKIE = 'bosun_session';
/** The header a console page sends its session's anti-forgery token in, on every write. */
export const CSRF_HEADER = 'x-csrf-token';

// The scheme is case-insensitive (RFC 9110 §11.1): `bearer`, `BEARER` and `Bearer` are one.
const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]{1,512})$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Pulls the token out of `Authorization: Bearer <token>`; throws 401 when it is missing or malformed. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new ApiError('unauthorized', 'Missing Authorization header; send "Authorization: Bearer <token>"');
  const match = BEARER.exec(header.trim());
  if (!match?.[1]) throw new ApiError('unauthorized', 'Malformed Authorization header; expected "Bearer <token>"');
  return match[1];
}

/** One cookie's value from a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}

/** Why a token (or a session's token) no longer acts, as a 401. */
export function refusal(rejection: Rejection, what: 'token' | 'session'): ApiError {
  if (rejection === 'disabled') return new ApiError('unauthorized', what === 'token' ? "The token's identity is disabled" : 'Your identity is disabled: ask an administrator');
  if (rejection === 'expired') return new ApiError('unauthorized', what === 'token' ? 'The token has expired: create a new one (bosun tokens create)' : "The session's token has expired: sign in with another");
  return new ApiError('unauthorized', what === 'token' ? 'The token is unknown or has been revoked' : "The session's token has been revoked: sign in with another");
}

/**
 * The principal of a console session's cookie secret: the session must be live and its token (or,
 * signed in without one, its person) still valid: a revoked or expired token, or a disabled person,
 * ends the session at once.
 */
export async function sessionPrincipal(secret: string, lifetime: SessionLifetime): Promise<{ principal: Principal; session: ConsoleSession } | Rejection | 'ended'> {
  const session = await findSession(secret, lifetime);
  if (!session) return 'ended';
  const principal = session.token_id
    ? await authenticateTokenId(session.token_id.toString())
    : session.identity_id
      ? await authenticateIdentity(session.identity_id.toString())
      : 'unknown';
  if (typeof principal === 'string') {
    await closeSession(secret);
    return principal;
  }
  return { principal: { ...principal, sessionId: session._id.toString() }, session };
}

/**
 * A bearer token (API clients, the CLI) or, without one, the console's session cookie; a write by
 * a session must carry its anti-forgery token in X-CSRF-Token.
 */
export function authenticate(lifetime: SessionLifetime): RequestHandler {
  return async (req, _res, next) => {
    const secret = req.headers.authorization ? undefined : cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (!secret) {
      const principal = await authenticateToken(bearerToken(req.headers.authorization));
      if (typeof principal === 'string') throw refusal(principal, 'token');
      req.principal = principal;
      return next();
    }
    const found = await sessionPrincipal(secret, lifetime);
    if (found === 'ended') throw new ApiError('unauthorized', 'The console session has ended (signed out, or idle too long): sign in again');
    if (typeof found === 'string') throw refusal(found, 'session');
    if (!SAFE_METHODS.has(req.method) && !csrfTokenMatches(secret, req.get(CSRF_HEADER))) {
      throw new ApiError('forbidden', 'A console write must carry its session\'s anti-forgery token in the X-CSRF-Token header');
    }
    req.principal = found.principal;
    req.consoleSession = { secret, session: found.session };
    next();
  };
}

export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('principalOf called on a route without authenticate');
  return req.principal;
}
