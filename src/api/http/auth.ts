import type { Request, RequestHandler } from 'express';
import { authenticateToken, type Principal } from '../../domain/tokens/service';
import { hasScope, type Scope } from '../../domain/tokens/scopes';
import { ApiError } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

// The scheme is case-insensitive (RFC 9110 §11.1): `bearer`, `BEARER` and `Bearer` are one.
const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]{1,512})$/i;

/** Pulls the token out of `Authorization: Bearer <token>`; throws 401 when it is missing or malformed. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new ApiError('unauthorized', 'Missing Authorization header; send "Authorization: Bearer <token>"');
  const match = BEARER.exec(header.trim());
  if (!match?.[1]) throw new ApiError('unauthorized', 'Malformed Authorization header; expected "Bearer <token>"');
  return match[1];
}

export const authenticate: RequestHandler = async (req, _res, next) => {
  const principal = await authenticateToken(bearerToken(req.headers.authorization));
  if (principal === 'expired') throw new ApiError('unauthorized', 'The token has expired: create a new one (bosun tokens create)');
  if (principal === 'unknown') throw new ApiError('unauthorized', 'The token is unknown or has been revoked');
  req.principal = principal;
  next();
};

export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('principalOf called on a route without authenticate');
  return req.principal;
}

export const requireScope =
  (scope: Scope): RequestHandler =>
  (req, _res, next) => {
    if (!hasScope(principalOf(req).scopes, scope)) {
      throw new ApiError('forbidden', `This token lacks the "${scope}" scope`);
    }
    next();
  };
