import { readFileSync } from 'node:fs';
import type { SshdInfo } from './sshd';

export const TEST_ENV_VAR = 'BOSUN_TEST_SERVICES';

/**
 * The tests' Bosuns' WORKER_HEARTBEAT_TIMEOUT_SECONDS: a killed worker's step is taken over after 6 s
 * rather than 15 (its workflow bundle made once, by the global setup).
 */
export const TEST_HEARTBEAT_TIMEOUT_SECONDS = 6;

export interface SharedServices {
  dir: string;
  cacheDir: string;
  mongodBinary: string;
  temporalBinary: string;
  mongoPort: number;
  temporalAddress: string;
  sshd: SshdInfo;
  /** Every Bosun of the run logs here at debug (unless TEST_LOG_LEVEL is set): the teardown looks for secrets in it. */
  logFile: string;
}

export function sharedServices(): SharedServices {
  const file = process.env[TEST_ENV_VAR];
  if (!file) throw new Error(`${TEST_ENV_VAR} is unset: run the tests through jest (npm test)`);
  return JSON.parse(readFileSync(file, 'utf8')) as SharedServices;
}
