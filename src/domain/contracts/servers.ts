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

/** The servers an inventory import added, verified `concurrency` at a time by one workflow. */
export interface ImportVerificationInput {
  organizationId: string;
  source: string;
  /** `after`: the jump hosts of the same import this server is reached through, verified first. */
  servers: Array<VerifyServerInput & { after?: string[] }>;
  concurrency: number;
}

/** How an import's verifications ended (a failed one says why on its server: `last_error`). */
export interface ImportVerificationResult {
  verified: number;
  failed: number;
}

export interface ServerHealthInput {
  serverId: string;
  organizationId: string;
  intervalSeconds: number;
}

export interface ServerHealthSweepInput {
  organizationId: string;
  intervalSeconds: number;
}

/** One sweep of an organization's watched servers. */
export interface HealthSweepResult {
  /** Servers checked (verified or offline, with a pinned host key); none: the sweep ends until a server is verified. */
  checked: number;
  verified: number;
  offline: number;
  /** The worker's configured interval, so a configuration change reaches a sweep already running. */
  intervalSeconds: number;
}

export type HealthOutcome = 'verified' | 'offline' | 'skipped' | 'gone';

export interface HealthCheckResult {
  outcome: HealthOutcome;
  /** The worker's configured interval, so a configuration change reaches monitors already running. */
  intervalSeconds: number;
}
