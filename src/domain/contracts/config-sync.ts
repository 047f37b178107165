/*
 * What a config source's sync workflow, its activity and Bosun agree on: the input, the outcome, and
 * the syncer the worker's composition hands the activity (the plan and apply live in the API's layer).
 */

export interface ConfigSyncInput {
  sourceId: string;
  organizationId: string;
  /** Started by the source's Temporal Schedule: the tick starts the source's one sync, or finds it running. */
  tick?: boolean;
  /** Who asked for a sync now (POST …/sync); absent for the clock's. */
  requestedBy?: string | null;
}

/** Why a repository could not be read, as a sync source's status shows it (src/domain/config/git-errors.ts). */
export type RepositoryErrorCode =
  | 'host_key_unknown'
  | 'host_key_mismatch'
  | 'unreachable'
  | 'authentication_failed'
  | 'ref_not_found'
  | 'path_not_found'
  | 'too_large'
  | 'timed_out'
  | 'refused_url';

/** Why a sync applied nothing: the repository's error codes, and the plan's or the source's. */
export type ConfigSyncFailureCode =
  | RepositoryErrorCode
  | 'plan_failed'
  | 'apply_refused'
  | 'forbidden'
  | 'run_as_unusable'
  | 'credentials_unreadable';

/** What a retry cannot fix: the workflow fails at once (the status already says why). */
export const FINAL_SYNC_FAILURES: readonly ConfigSyncFailureCode[] = [
  'host_key_unknown',
  'host_key_mismatch',
  'authentication_failed',
  'refused_url',
  'ref_not_found',
  'path_not_found',
  'too_large',
  'plan_failed',
  'apply_refused',
  'forbidden',
  'run_as_unusable',
  'credentials_unreadable',
];

export type ConfigSyncOutcome =
  | { outcome: 'applied' | 'unchanged'; revision: string; created: number; updated: number; deleted: number }
  | { outcome: 'failed'; code: ConfigSyncFailureCode; message: string; revision: string | null }
  | { outcome: 'gone' }
  | { outcome: 'already_running' };

/** Fetches a source's repository, plans it and applies a clean plan, recording the status (src/api/config/source-sync.ts). */
export interface ConfigSourceSyncer {
  sync(sourceId: string, signal: AbortSignal): Promise<ConfigSyncOutcome>;
}
