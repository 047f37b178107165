import type { RequestHandler } from 'express';
import { mayAtAll, mayEverywhere, type Access } from '../../../domain/access/grants';
import { ACTIONS, type Action } from '../../../domain/access/roles';
import type { Principal } from '../../../domain/tokens/service';
import { principalOf } from '../../http/auth';
import { actionRefusal, refusal } from './refusals';

/*
 * The gate's questions about an action before anything is looked up: may the caller do it at all
 * (somewhere), or organization-wide; which it may do (the console's rights); may it open a socket.
 */

/** The caller may do `action` on some server or deployment (the rest is checked where the request says which). */
export const requireAction =
  (action: Action): RequestHandler =>
  (req, _res, next) => {
    const principal = principalOf(req);
    if (!mayAtAll(principal, action)) throw actionRefusal(principal, action);
    next();
  };

/** The caller may do `action` organization-wide, unlimited (people, tokens, settings, secrets). */
export const requireEverywhere =
  (action: Action): RequestHandler =>
  (req, _res, next) => {
    const principal = principalOf(req);
    if (!mayEverywhere(principal, action)) {
      throw mayAtAll(principal, action) ? refusal('forbidden', `"${action}" here needs a role binding for the whole organization`) : actionRefusal(principal, action);
    }
    next();
  };

/** What the caller (or a token) may do, for the console to show: `admin` and `audit:read` count for the whole organization only (the pages they open need that). */
export const rightsOf = (access: Access): Action[] =>
  ACTIONS.filter((action) => (action === 'admin' || action === 'audit:read' ? mayEverywhere(access, action) : mayAtAll(access, action)));

/** A socket subscribes to what it may read: one that may read nothing is refused at its handshake. */
export function assertMayOpenSocket(principal: Principal): void {
  if (!mayAtAll(principal, 'read')) throw refusal('forbidden', 'This identity or token may not read');
}
