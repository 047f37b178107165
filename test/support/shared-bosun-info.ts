import path from 'node:path';
import type { BosunOptions } from './bosun-config';

/* What the shared Bosun of a jest worker (shared-bosun-process.ts) publishes, and where: its test files and the global teardown read it. */

export interface SharedBosunInfo {
  pid: number;
  /** Its API and Socket.IO. */
  url: string;
  /** Its control port, for the tests alone: POST /token, /forget and /routes. */
  control: string;
  mongoUri: string;
  taskQueue: string;
  /** Its master key (base64; a throwaway of the test run): for tests that seal what it opens. */
  secretKey: string;
}

/** The shared Bosun's settings: a test's defaults, but for a rate limit no run's many files together reach. */
export const SHARED_BOSUN_OPTIONS: BosunOptions = { rateLimitPerMinute: 1_000_000 };

/** Where jest worker `worker`'s shared Bosun says where it is. */
export const sharedBosunFile = (servicesDir: string, worker: string) => path.join(servicesDir, `shared-bosun-${worker}.json`);

/** Every shared Bosun's file of a run. */
export const SHARED_BOSUN_FILE_PATTERN = /^shared-bosun-[^.]+\.json$/;
