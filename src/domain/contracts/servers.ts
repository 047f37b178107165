/** What a server's verification and health workflows take and give. */

export interface VerifyServerInput {
  serverId: string;
  organizationId: string;
  maxAttempts: number;
  healthIntervalSeconds: number;
  /** Accept whatever host key the server presents this time (after a reinstall), and pin it. */
  trustNewHostKey: boolean;
  /** "title (host)", for the summary of the health monitor it starts (absent in older verifications). */
  serverLabel?: string;
}

export interface ServerHealthInput {
  serverId: string;
  organizationId: string;
  intervalSeconds: number;
}

export type HealthOutcome = 'verified' | 'offline' | 'skipped' | 'gone';

export interface HealthCheckResult {
  outcome: HealthOutcome;
  /** The worker's configured interval, so a configuration change reaches monitors already running. */
  intervalSeconds: number;
}
