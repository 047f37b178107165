import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

/** Business ids: one verification and one health monitor per server, easy to find in the Temporal UI. */
export const serverVerifyWorkflowId = (serverId: string) => `server-verify-${serverId}`;
export const serverHealthWorkflowId = (serverId: string) => `server-health-${serverId}`;

const keyword = (name: string): SearchAttributeKey<'KEYWORD'> => ({ name, type: 'KEYWORD' });

/** Typed search attributes; the embedded dev server registers them at start, `ensureSearchAttributes` elsewhere. */
export const SEARCH_ATTRIBUTES = {
  organization: keyword('BosunOrganization'),
  server: keyword('BosunServer'),
  deployment: keyword('BosunDeployment'),
} as const;

/** Temporal failure types that no retry can fix (see src/ssh/errors.ts for the SSH ones). */
export const NON_RETRYABLE_FAILURES = [
  'SshAuthenticationFailed',
  'SshHostKeyMismatch',
  'SshKeyInvalid',
  'ServerNotFound',
  'FingerprintParseError',
];

export interface VerifyServerInput {
  serverId: string;
  organizationId: string;
  maxAttempts: number;
  healthIntervalSeconds: number;
}

export interface ServerHealthInput {
  serverId: string;
  organizationId: string;
  intervalSeconds: number;
}

export type HealthOutcome = 'verified' | 'offline' | 'skipped' | 'gone';
