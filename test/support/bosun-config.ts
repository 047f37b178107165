import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config';
import type { ComposeOptions } from '../../src/compose';
import type { Planner } from '../../src/domain/planner/types';
import pino, { type DestinationStream } from 'pino';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { createLogger, type Logger } from '../../src/logger';
import { TEST_CLOCKS, type SharedServices } from './shared';

/*
 * How a test's Bosun is configured: the options a test may ask for, turned into Bosun's own settings
 * (parsed by Bosun's own loadConfig, as in production) and compose()'s tuning. The Bosun of a test
 * file (bosun.ts) and the Bosun a jest worker shares between its files (shared-bosun.ts) both use it.
 */

export interface BosunOptions {
  healthIntervalSeconds?: number;
  verifyMaxAttempts?: number;
  rateLimitPerMinute?: number;
  /** How often the worker side looks for queued runs whose wake was lost. */
  queueSweepMs?: number;
  /** How often the worker accounts for skipped ticks and reconciles Temporal Schedules (every 10th round). */
  scheduleSweepMs?: number;
  /** How often the worker starts the notification dispatcher and the audit trail's workflows if they are not running (a minute). */
  singletonsEveryMs?: number;
  bodyLimitBytes?: number;
  stepOutputLimitBytes?: number;
  /** Seal with one master key in the API and open with another in the worker (a misconfiguration). */
  workerMasterKey?: Buffer;
  /** The built-in rules unless given. */
  planner?: Planner;
  /** false: no worker, as while every worker is down (workflows start; nothing runs them). */
  worker?: boolean;
  /** WORKER_MAX_CONCURRENT_STEPS: how many steps the worker runs at once. */
  maxConcurrentSteps?: number;
  /** How long a step runs before its hand-off (2 s unless given): longer, a held step stays a quick one. */
  stepHandoffAfterMs?: number;
  /** False: nothing follows a handed-off step (the worker's own task queue unpolled, as when its follower is stuck). */
  followHandoffs?: boolean;
  /** Runs an organization may have queued or running (ORG_MAX_ACTIVE_RUNS). */
  maxActiveRuns?: number;
  /** Socket.IO subscriptions one connection may hold. */
  subscriptionsPerConnection?: number;
  /** Every log line of this Bosun (API and worker), at `logLevel`, instead of TEST_LOG_LEVEL to stdout. */
  logTo?: DestinationStream;
  logLevel?: string;
  /** TEMPORAL_UI_URL: runs and conversations then link to their workflows. */
  temporalUiUrl?: string;
  metricsToken?: string;
  /** Caps each migration transfer (bytes per second): long enough to watch its progress. */
  transferMaxBytesPerSecond?: number;
  /** STEP_LOG_LIMIT_BYTES: how much of a step's output its whole log keeps. */
  stepLogLimitBytes?: number;
  /** SESSION_IDLE_SECONDS and SESSION_MAX_SECONDS of the console's sign-ins. */
  sessionIdleSeconds?: number;
  sessionMaxSeconds?: number;
  /** Further settings, as environment variables (the OpenID provider's, say). */
  env?: Record<string, string>;
}

export const key = () => randomBytes(32).toString('base64');

/** The configuration a test's Bosun runs with: Bosun's own parsing of these variables, as in production. */
export function testConfig(options: BosunOptions, env: Record<string, string | undefined>): Readonly<Config> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    BOSUN_HOME: path.join(tmpdir(), 'bosun-test-home'),
    SERVER_HEALTH_INTERVAL_SECONDS: String(options.healthIntervalSeconds ?? 60),
    SSH_VERIFY_MAX_ATTEMPTS: String(options.verifyMaxAttempts ?? 3),
    SSH_CONNECT_TIMEOUT_MS: '5000',
    RATE_LIMIT_PER_MINUTE: String(options.rateLimitPerMinute ?? 10_000),
    BODY_LIMIT_BYTES: String(options.bodyLimitBytes ?? 1024 * 1024),
    STEP_OUTPUT_LIMIT_BYTES: String(options.stepOutputLimitBytes ?? 128 * 1024),
    ...TEST_CLOCKS,
    ...(options.maxActiveRuns ? { ORG_MAX_ACTIVE_RUNS: String(options.maxActiveRuns) } : {}),
    ...(options.maxConcurrentSteps ? { WORKER_MAX_CONCURRENT_STEPS: String(options.maxConcurrentSteps) } : {}),
    ...(options.temporalUiUrl ? { TEMPORAL_UI_URL: options.temporalUiUrl } : {}),
    ...(options.metricsToken ? { METRICS_TOKEN: options.metricsToken } : {}),
    ...(options.stepLogLimitBytes ? { STEP_LOG_LIMIT_BYTES: String(options.stepLogLimitBytes) } : {}),
    ...(options.transferMaxBytesPerSecond ? { TRANSFER_MAX_BYTES_PER_SECOND: String(options.transferMaxBytesPerSecond) } : {}),
    ...(options.sessionIdleSeconds ? { SESSION_IDLE_SECONDS: String(options.sessionIdleSeconds) } : {}),
    ...(options.sessionMaxSeconds ? { SESSION_MAX_SECONDS: String(options.sessionMaxSeconds) } : {}),
    ...options.env,
    ...env,
  });
  // Any free port (PORT cannot say 0).
  return { ...config, http: { ...config.http, port: 0, portExplicit: true } };
}

/** compose()'s tuning of a test's Bosun: sweeps every few seconds rather than every half minute. */
export function composeTuning(options: BosunOptions): ComposeOptions {
  return {
    planner: options.planner,
    queueSweepMs: options.queueSweepMs ?? 10_000,
    scheduleSweepMs: options.scheduleSweepMs ?? 2_000,
    singletonsEveryMs: options.singletonsEveryMs,
    subscriptionsPerConnection: options.subscriptionsPerConnection,
    stepHandoffAfterMs: options.stepHandoffAfterMs,
    followHandoffs: options.followHandoffs,
  };
}

/** A test Bosun's own database and task queue on the shared mongod and Temporal, and a master key of its own. */
export function testEnv(services: SharedServices, id = randomBytes(4).toString('hex')) {
  const mongoUri = embeddedMongoUri(services.mongoPort, `bosun_test_${id}`);
  return {
    MONGODB_URI: mongoUri,
    TEMPORAL_ADDRESS: services.temporalAddress,
    TEMPORAL_TASK_QUEUE: `bosun-test-${id}`,
    BOSUN_CACHE_DIR: services.cacheDir,
    BOSUN_SECRET_KEY: key(),
  };
}

/**
 * Where a test Bosun logs: every line at debug into the run's one log file (the global teardown
 * looks for secrets in it), or to stdout at TEST_LOG_LEVEL, or where the test asks.
 */
export function testLogger(options: BosunOptions, services: SharedServices): Logger {
  if (options.logTo) return createLogger(options.logLevel ?? 'trace', 'bosun', options.logTo);
  if (process.env.TEST_LOG_LEVEL) return createLogger(process.env.TEST_LOG_LEVEL);
  return createLogger('debug', 'bosun', pino.destination({ dest: services.logFile, append: true, sync: true }));
}
