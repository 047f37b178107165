import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mongo } from 'mongoose';
import pino from 'pino';
import type { DestinationStream } from 'pino';
import supertest from 'supertest';
import { compose, type Composed } from '../../src/compose';
import { loadConfig, type Config } from '../../src/config';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { createLogger } from '../../src/logger';
import type { Planner } from '../../src/domain/planner/types';
import type { Scope } from '../../src/domain/access/scopes';
import { createToken } from '../../src/domain/tokens/service';
import { sharedServices } from './shared';
import { FINAL_CONVERSATION_STATUSES } from '../../src/domain/conversations/model';
import { FINAL_RUN_STATUSES } from '../../src/domain/deployments/model';

// Most suites wait for conditions on the Bosun they start: they take the one poller from here.
export { eventually } from './eventually';

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
  /** SESSION_IDLE_SECONDS and SESSION_MAX_SECONDS of the console's sign-ins. */
  /** Caps each migration transfer (bytes per second): long enough to watch its progress. */
  transferMaxBytesPerSecond?: number;
  /** STEP_LOG_LIMIT_BYTES: how much of a step's output its whole log keeps. */
  stepLogLimitBytes?: number;
  sessionIdleSeconds?: number;
  sessionMaxSeconds?: number;
  /** Further settings, as environment variables (the OpenID provider's, say). */
  env?: Record<string, string>;
}

const key = () => randomBytes(32).toString('base64');

/** The configuration a test's Bosun runs with: Bosun's own parsing of these variables, as in production. */
function testConfig(options: BosunOptions, env: Record<string, string | undefined>): Readonly<Config> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    BOSUN_HOME: path.join(tmpdir(), 'bosun-test-home'),
    SERVER_HEALTH_INTERVAL_SECONDS: String(options.healthIntervalSeconds ?? 60),
    SSH_VERIFY_MAX_ATTEMPTS: String(options.verifyMaxAttempts ?? 3),
    SSH_CONNECT_TIMEOUT_MS: '5000',
    RATE_LIMIT_PER_MINUTE: String(options.rateLimitPerMinute ?? 10_000),
    BODY_LIMIT_BYTES: String(options.bodyLimitBytes ?? 1024 * 1024),
    STEP_OUTPUT_LIMIT_BYTES: String(options.stepOutputLimitBytes ?? 128 * 1024),
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

/**
 * A whole Bosun inside the test process, built by the same compose() as `npm start`, on the shared
 * mongod and Temporal, with a database and task queue of its own so test files never see each
 * other's data.
 */
export async function startBosun(options: BosunOptions = {}) {
  const services = sharedServices();
  const id = randomBytes(4).toString('hex');
  const mongoUri = embeddedMongoUri(services.mongoPort, `bosun_test_${id}`);
  const log = options.logTo
    ? createLogger(options.logLevel ?? 'trace', 'bosun', options.logTo)
    : process.env.TEST_LOG_LEVEL
      ? createLogger(process.env.TEST_LOG_LEVEL)
      : createLogger('debug', 'bosun', pino.destination({ dest: services.logFile, append: true, sync: true }));
  const env = {
    MONGODB_URI: mongoUri,
    TEMPORAL_ADDRESS: services.temporalAddress,
    TEMPORAL_TASK_QUEUE: `bosun-test-${id}`,
    BOSUN_CACHE_DIR: services.cacheDir,
    BOSUN_SECRET_KEY: key(),
  };
  const at = { mongoUri, temporalAddress: services.temporalAddress };
  const tuning = {
    planner: options.planner,
    queueSweepMs: options.queueSweepMs ?? 10_000,
    scheduleSweepMs: options.scheduleSweepMs ?? 2_000,
    singletonsEveryMs: options.singletonsEveryMs,
    subscriptionsPerConnection: options.subscriptionsPerConnection,
    stepHandoffAfterMs: options.stepHandoffAfterMs,
  };
  // One process with both roles, as `npm start` runs; or the API alone (no worker running), or the
  // API and a worker with another master key (a misconfigured worker).
  const roles: Composed[] = [];
  if (options.worker === false) roles.push(await compose(testConfig(options, env), 'api', at, log, tuning));
  else if (options.workerMasterKey) {
    roles.push(await compose(testConfig(options, env), 'api', at, log, tuning));
    roles.push(await compose(testConfig(options, { ...env, BOSUN_SECRET_KEY: options.workerMasterKey.toString('base64'), WORKER_METRICS_PORT: '0' }), 'worker', at, log, tuning));
  } else roles.push(await compose(testConfig(options, env), 'all', at, log, tuning));
  const api = roles[0]!;

  return {
    api: supertest(api.httpServer!),
    /** The Express app itself, for tests that look at its routes. */
    app: api.app!,
    /** Where the HTTP API and Socket.IO listen, for clients other than supertest. */
    url: api.url!,
    temporal: api.temporal,
    /** This Bosun's Temporal task queue (its own, as each test's Bosun has). */
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    sshd: services.sshd,
    services,
    mongoUri,
    /** A fresh API token of an organization (created on first mention). */
    async token(org: string, scopes: Scope[] = ['admin'], name = `token-${randomBytes(3).toString('hex')}`) {
      return (await createToken({ org, name, scopes })).token;
    },
    async stop() {
      for (const role of [...roles].reverse()) await role.stop();
      const client = new mongo.MongoClient(mongoUri);
      try {
        await client.db().dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}

export type Bosun = Awaited<ReturnType<typeof startBosun>>;

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A run (or conversation) that reached a final status: what a test waits for. */
export const runEnded = <T extends { status: string }>(run: T) => (FINAL_RUN_STATUSES as readonly string[]).includes(run.status);
export const conversationEnded = <T extends { status: string }>(conversation: T) => (FINAL_CONVERSATION_STATUSES as readonly string[]).includes(conversation.status);
