import { readFileSync } from 'node:fs';
import type { SshdInfo } from './sshd';

export const TEST_ENV_VAR = 'BOSUN_TEST_SERVICES';

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
