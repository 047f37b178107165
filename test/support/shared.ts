import { readFileSync } from 'node:fs';
import type { SshdInfo } from './sshd';

export const TEST_ENV_VAR = 'BOSUN_TEST_SERVICES';

/**
 * The tests' Bosuns' WORKER_HEARTBEAT_TIMEOUT_SECONDS: a killed worker's step is taken over after 6 s
 * rather than 15 (its workflow bundle made once, by the global setup).
 */
export const TEST_HEARTBEAT_TIMEOUT_SECONDS = 6;

/** The tests' Bosuns' NOTIFICATION_RETRY_SECONDS: a refused delivery is tried again after 1 s, 2, 4… rather than 5, 10, 20… */
export const TEST_NOTIFICATION_RETRY_SECONDS = 1;

/**
 * The clocks of every Bosun the tests start, in process or not: a stopped or killed worker's runs
 * move on to another after 3 s rather than 10 (its sticky queue), its steps after 6 rather than 15; a
 * refused notification is retried after 1 s rather than 5.
 */
export const TEST_CLOCKS = {
  WORKER_STICKY_TIMEOUT_SECONDS: '3',
  WORKER_HEARTBEAT_TIMEOUT_SECONDS: String(TEST_HEARTBEAT_TIMEOUT_SECONDS),
  NOTIFICATION_RETRY_SECONDS: String(TEST_NOTIFICATION_RETRY_SECONDS),
};

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
