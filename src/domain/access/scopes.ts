/** What a token may be narrowed to; the same names as the actions roles grant (roles.ts beside it). */
export const SCOPES = ['read', 'servers:write', 'deployments:write', 'deployments:run', 'conversations:write', 'approve', 'audit:read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** `admin` holds every scope. */
export const hasScope = (granted: readonly string[], needed: Scope) => granted.includes('admin') || granted.includes(needed);
