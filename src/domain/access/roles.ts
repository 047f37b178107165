import { SCOPES, type Scope } from './scopes';

/** What an identity may do: the token scopes' names, so a token's scopes narrow its identity's rights by name. */
export const ACTIONS = SCOPES;
export type Action = Scope;

export const ROLES = ['viewer', 'operator', 'approver', 'deployer', 'server-admin', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Every role but auditor reads; each adds what its name says. An auditor reads the audit trail and nothing else. */
export const ROLE_ACTIONS: Record<Role, readonly Action[]> = {
  viewer: ['read'],
  operator: ['read', 'deployments:run', 'conversations:write'],
  approver: ['read', 'approve'],
  deployer: ['read', 'deployments:run', 'conversations:write', 'deployments:write'],
  'server-admin': ['read', 'servers:write'],
  auditor: ['audit:read'],
  admin: ACTIONS,
};

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/**
 * The least role that holds a scope: how an older version's token, known only by its scopes, becomes
 * a service account with roles (its scopes still narrow it, so nothing gains access).
 */
export const ROLE_OF_SCOPE: Record<Scope, Role> = {
  read: 'viewer',
  'deployments:run': 'operator',
  'conversations:write': 'operator',
  'deployments:write': 'deployer',
  'servers:write': 'server-admin',
  approve: 'approver',
  'audit:read': 'auditor',
  admin: 'admin',
};

/** The roles a list of scopes means, without repeats. */
export const rolesOfScopes = (scopes: readonly Scope[]): Role[] => [...new Set(scopes.map((scope) => ROLE_OF_SCOPE[scope]))];
