import { identityAccess } from '../../../domain/access/identities';
import type { Access } from '../../../domain/access/grants';
import { hasScope } from '../../../domain/access/scopes';
import type { Action, Role } from '../../../domain/access/roles';
import { rightsOf } from './actions';

/** One of the identity's role bindings as the token may use it: the role's actions its scopes leave, within the binding's limits. */
export interface TokenBinding {
  role: Role;
  actions: Action[];
  servers: { tags: string[] } | null;
  deployments: string[] | null;
  max_targets_per_run: number | null;
}

/** What a token can do: the actions (as the console's rights count them) and the role bindings they come from. */
export interface TokenRights {
  actions: Action[];
  bindings: TokenBinding[];
}

const NOTHING: TokenRights = { actions: [], bindings: [] };

/** A token's identity's grants narrowed by its scopes: the same rules the gate applies to its requests. */
export function rightsOfAccess(access: Access): TokenRights {
  const bindings = access.grants
    .map((g) => ({
      role: g.role,
      actions: [...g.actions].filter((action) => hasScope(access.scopes, action)),
      servers: g.tags ? { tags: [...g.tags] } : null,
      deployments: g.deployments ? [...g.deployments] : null,
      max_targets_per_run: g.maxTargets,
    }))
    .filter((g) => g.actions.length > 0);
  return { actions: rightsOf(access), bindings };
}

/** What each token can do now (nothing once revoked or expired, or its identity disabled or gone); identities looked up once each. */
export async function tokensRights(tokens: Array<{ identity_id: string | null; scopes: readonly string[]; revoked_at: Date | null; expires_at: Date | null }>): Promise<TokenRights[]> {
  const identities = [...new Set(tokens.flatMap((t) => (t.identity_id ? [t.identity_id] : [])))];
  const accesses = new Map(await Promise.all(identities.map(async (id) => [id, await identityAccess(id)] as const)));
  const now = Date.now();
  return tokens.map((t) => {
    const access = t.identity_id ? accesses.get(t.identity_id) : null;
    if (!access || access.disabled || t.revoked_at || (t.expires_at && t.expires_at.getTime() <= now)) return NOTHING;
    return rightsOfAccess({ grants: access.grants, scopes: t.scopes });
  });
}
