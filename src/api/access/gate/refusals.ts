import type { Action } from '../../../domain/access/roles';
import { hasScope } from '../../../domain/access/scopes';
import type { Principal } from '../../../domain/tokens/service';
import { ApiError, notFound, type ErrorDetail } from '../../http/errors';

/*
 * The one shape of the gate's refusals: 403 `forbidden` (not allowed, and told why), 403
 * `people_only` (a service account where only a person may act), or a 404 for what the caller may
 * not even see (as another organization's). Every question of the gate refuses through `refusal`.
 */

export type RefusalKind = 'forbidden' | 'people_only' | 'hidden';

/** A refusal of the gate: `hidden` takes the name of what is not found; the others, their message (and the servers refused, if any). */
export function refusal(kind: RefusalKind, text: string, details?: ErrorDetail[]): ApiError {
  return kind === 'hidden' ? notFound(text) : new ApiError(kind, text, details);
}

/** `action` refused: the identity has no role that allows it, or its token lacks the scope. */
export const actionRefusal = (principal: Principal, action: Action) =>
  refusal('forbidden', hasScope(principal.scopes, action) ? `${principal.identity.name} has no role that allows "${action}"` : `This token lacks the "${action}" scope`);
