import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_NOTIFICATION_RETRY_SECONDS } from './domain/contracts/notifications';

const port = z.coerce.number().int().min(1).max(65535);
const optionalString = z.string().trim().min(1).optional();
const positiveInt = z.coerce.number().int().positive();
const flag = (byDefault: '0' | '1') => z.enum(['0', '1', 'true', 'false']).default(byDefault).transform((v) => v === '1' || v === 'true');

/** Every environment variable Bosun reads, with its default. The configuration table of docs/configuration.md mirrors this. */
const envSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BOSUN_HOME: z.string().min(1).default('.bosun'),
  BOSUN_CACHE_DIR: optionalString,
  BOSUN_SECRET_KEY: optionalString,
  BOSUN_OFFLINE: flag('0'),

  MONGODB_URI: optionalString,
  MONGO_PORT: port.default(27017),
  MONGOD_PATH: optionalString,

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('bosun'),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_TLS: flag('0'),
  TEMPORAL_TLS_CERT: optionalString,
  TEMPORAL_TLS_KEY: optionalString,
  TEMPORAL_TLS_CA: optionalString,
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),

  // 0: a worker process serves no metrics.
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  METRICS_TOKEN: optionalString,
  WORKER_MAX_CONCURRENT_STEPS: positiveInt.min(2).max(10000).default(200),
  WORKER_STICKY_TIMEOUT_SECONDS: positiveInt.max(600).default(10),
  // Above the 2 s between two heartbeats of any activity, with a margin for a busy worker.
  WORKER_HEARTBEAT_TIMEOUT_SECONDS: positiveInt.min(5).max(600).default(15),
  WORKER_SHUTDOWN_GRACE_SECONDS: positiveInt.max(3600).default(10),
  // Workflows a worker keeps in memory between their tasks; never fewer than its workflow-task slots.
  WORKER_WORKFLOW_CACHE: positiveInt.max(100_000).default(250),
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(300).default(30),
  HEAP_RETURN_AFTER_BURSTS: flag('1'),

  SERVER_HEALTH_INTERVAL_SECONDS: positiveInt.default(60),
  SSH_CONNECT_TIMEOUT_MS: positiveInt.default(10000),
  SSH_MAX_CHANNELS_PER_CONNECTION: positiveInt.max(64).default(8),
  // Idle pooled connections beyond it are closed, least recently used first.
  SSH_POOL_MAX: positiveInt.max(100_000).default(256),
  // How long an idle pooled connection stays open: longer than the health interval, whose probes then keep it warm.
  SSH_POOL_IDLE_SECONDS: positiveInt.max(86_400).default(300),
  SSH_VERIFY_MAX_ATTEMPTS: positiveInt.max(100).default(6),
  // How many servers an inventory import verifies at once.
  IMPORT_VERIFY_CONCURRENCY: positiveInt.max(100).default(8),

  STEP_OUTPUT_LIMIT_BYTES: positiveInt.min(1024).default(128 * 1024),
  STEP_LOG_LIMIT_BYTES: positiveInt.min(1024).default(64 * 1024 * 1024),
  STEP_LOG_RETENTION_DAYS: z.coerce.number().positive().default(30),
  // 0: as fast as the servers and the worker allow.
  TRANSFER_MAX_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(0),
  BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  ORG_MAX_ACTIVE_RUNS: positiveInt.default(200),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(600),
  SESSION_IDLE_SECONDS: positiveInt.default(30 * 60),
  SESSION_MAX_SECONDS: positiveInt.default(12 * 3600),
  PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),

  OIDC_ISSUER_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  OIDC_CLIENT_ID: optionalString,
  OIDC_CLIENT_SECRET: optionalString,
  OIDC_SCOPES: z.string().trim().min(1).default('openid profile email'),
  OIDC_GROUPS_CLAIM: z.string().trim().min(1).default('groups'),
  OIDC_ORGANIZATION: z.string().trim().min(1).default('default'),
  OIDC_CREATE_PEOPLE: flag('0'),
  OIDC_DISPLAY_NAME: optionalString,

  // The wait before a refused notification's second attempt; each later wait doubles (to an hour at most).
  NOTIFICATION_RETRY_SECONDS: positiveInt.max(3600).default(DEFAULT_NOTIFICATION_RETRY_SECONDS),
  // Fewer attempts than the 24 h allow before a delivery is dead (unset: as many as start within the 24 h).
  NOTIFICATION_MAX_ATTEMPTS: positiveInt.max(1000).optional(),

  AUDIT_CHECKPOINT_MINUTES: z.coerce.number().positive().default(60),
  AUDIT_RETENTION_DAYS: z.coerce.number().positive().default(400),
  // An entry whose outcome never came (Bosun died between a change and its outcome) is chained as unknown after this.
  AUDIT_PENDING_SECONDS: positiveInt.default(300),

  // The shortest interval a schedule may have ("every"); a minute unless set (seconds suit a test's stack).
  SCHEDULE_MIN_INTERVAL_SECONDS: positiveInt.default(60),
  // How often the worker accounts for skipped ticks, and how long after a tick's catch-up window ends it does.
  SCHEDULE_SWEEP_SECONDS: positiveInt.default(30),
  SCHEDULE_ACCOUNTING_GRACE_SECONDS: positiveInt.default(60),

  LLM_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  LLM_API_KEY: optionalString,
  LLM_MODEL: optionalString,
  LLM_MAX_ATTEMPTS: positiveInt.max(10).default(3),
  LLM_MAX_REPLANS: z.coerce.number().int().min(0).max(10).default(2),
  LLM_TIMEOUT_MS: positiveInt.default(60_000),
});

/** How to reach a Temporal that is not the local dev server: TLS (with a client certificate for mTLS), or an API key. */
export interface TemporalSecurity {
  tls: boolean;
  /** PEM files: the client certificate and key (mTLS, as Temporal Cloud's certificate auth), and a CA to trust. */
  clientCertPath?: string;
  clientKeyPath?: string;
  serverRootCaPath?: string;
  serverName?: string;
  /** Temporal Cloud API key; implies TLS. */
  apiKey?: string;
}

export type Env = z.infer<typeof envSchema>;

/** An OpenAI-compatible chat-completions endpoint that plans conversations. */
export interface LlmConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Answers asked for per plan while the model's are malformed or refused by the policy. */
  maxAttempts: number;
  /** Re-plans after failed steps per instruction. */
  maxReplans: number;
  timeoutMs: number;
}

export interface Config {
  /** portExplicit: PORT was set, so a taken port is an error rather than a reason to move. */
  http: { host: string; port: number; portExplicit: boolean; bodyLimitBytes: number; rateLimitPerMinute: number };
  logLevel: Env['LOG_LEVEL'];
  home: string;
  cacheDir: string;
  /** Never try the vendors' downloads (air-gapped machines): fail at once with what to install. */
  offline: boolean;
  secretKey?: string;
  mongo: { uri?: string; port: number; mongodPath?: string };
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    port: number;
    uiPort: number;
    cliPath?: string;
    /** TLS, mTLS or an API key, for a Temporal cluster or Temporal Cloud. */
    security: TemporalSecurity;
    /** The Web UI, for `temporal_ui_url` links; `npm start` uses the dev server's when unset. */
    uiUrl?: string;
  };
  /**
   * maxConcurrentSteps: how many steps one worker process runs at once. stickyTimeoutSeconds: how long
   * a workflow task waits for the worker that ran its workflow last before any worker takes it.
   * heartbeatTimeoutSeconds: how long a heartbeating activity (a step's command) of a worker that died
   * silently stands still before another worker takes it over. shutdownGraceSeconds: how long a
   * stopping worker lets its running activities finish before it hands them back. workflowCache: how
   * many workflows it keeps in memory between their tasks (an evicted one replays its history on its next).
   */
  worker: { maxConcurrentSteps: number; stickyTimeoutSeconds: number; heartbeatTimeoutSeconds: number; shutdownGraceSeconds: number; workflowCache: number };
  memory: { heapGrowthPercent: number; returnAfterBursts: boolean }; // V8's heaps: their growth past the live size (src/heap-growth.ts), their pages given back after a burst (src/quiet-collection.ts)
  /** workerPort 0: none; workerPortExplicit: a taken port is an error rather than a reason to move. token: wanted by /metrics when set. */
  metrics: { workerPort: number; workerPortExplicit: boolean; token?: string };
  servers: { healthIntervalSeconds: number; verifyMaxAttempts: number; importVerifyConcurrency: number };
  deployments: { stepOutputLimitBytes: number; maxActiveRunsPerOrganization: number };
  /** Steps' whole logs: how much of each step's output is kept, and for how long. */
  stepLogs: { limitBytes: number; retentionDays: number };
  /** Data moved between a migration plan's servers, per transfer; 0 for no limit. */
  transfers: { maxBytesPerSecond: number };
  ssh: { connectTimeoutMs: number; maxChannelsPerConnection: number; maxConnections: number; idleTimeoutMs: number };
  /** Notifications: the wait before a refused delivery's second attempt (doubling after). */
  notifications: { retrySeconds: number; maxAttempts: number | undefined };
  /** The audit trail: checkpoints' period, retention, and how long an entry waits for its outcome. */
  audit: { checkpointMinutes: number; retentionDays: number; pendingSeconds: number };
  /** Schedules: the shortest interval allowed; how often skipped ticks are accounted for, and how long after they could no longer run. */
  schedules: { minIntervalSeconds: number; sweepSeconds: number; accountingGraceSeconds: number };
  /** Without llm, conversations use the built-in rules planner. */
  planner: { llm?: LlmConfig };
  /**
   * The web console's sign-in sessions: ended after idleSeconds without a request, and maxSeconds
   * after sign-in. publicUrl: the address browsers reach Bosun at (from each request's Host unless set).
   */
  console: { sessionIdleSeconds: number; sessionMaxSeconds: number; publicUrl?: string; oidc?: OidcConfig };
}

/** People sign in to the console through an OpenID Connect provider (authorization code + PKCE). */
export interface OidcConfig {
  issuerUrl: string;
  clientId: string;
  /** None: a public client (PKCE alone). */
  clientSecret?: string;
  scopes: string;
  /** The claim (ID token or userinfo) listing a person's groups, matched against teams' oidc_groups. */
  groupsClaim: string;
  /** The slug of the organization people sign in to. */
  organization: string;
  /** Whether a first sign-in creates the person; otherwise an unknown person is refused. */
  createPeople: boolean;
  /** "Sign in with <displayName>"; the issuer's host unless set. */
  displayName: string;
}

export class ConfigError extends Error { override name = 'ConfigError'; }

/** Parses the environment once; a bad value stops start-up with a message that names the variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(source);
  const problems: Array<{ name: string; message: string }> = parsed.success
    ? [...missingLlmVariables(parsed.data), ...halfClientCertificate(parsed.data), ...oidcProblems(parsed.data)]
    : parsed.error.issues.map((issue) => ({ name: issue.path.join('.'), message: issue.message }));
  if (!parsed.success || problems.length) {
    const lines = problems.map(({ name, message }) => {
      const raw = source[name];
      const shown = raw === undefined ? 'unset' : `"${/SECRET|KEY|TOKEN/.test(name) ? '<hidden>' : raw}"`;
      return `  ${name} (${shown}): ${message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const home = path.resolve(e.BOSUN_HOME);
  return Object.freeze({
    http: { host: e.HOST, port: e.PORT, portExplicit: source.PORT !== undefined, bodyLimitBytes: e.BODY_LIMIT_BYTES, rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE },
    logLevel: e.LOG_LEVEL,
    home,
    cacheDir: path.resolve(e.BOSUN_CACHE_DIR ?? path.join(home, 'cache')),
    offline: e.BOSUN_OFFLINE,
    secretKey: e.BOSUN_SECRET_KEY,
    mongo: { uri: e.MONGODB_URI, port: e.MONGO_PORT, mongodPath: e.MONGOD_PATH },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      cliPath: e.TEMPORAL_CLI_PATH,
      security: {
        tls: e.TEMPORAL_TLS || Boolean(e.TEMPORAL_TLS_CERT || e.TEMPORAL_API_KEY),
        clientCertPath: e.TEMPORAL_TLS_CERT,
        clientKeyPath: e.TEMPORAL_TLS_KEY,
        serverRootCaPath: e.TEMPORAL_TLS_CA,
        serverName: e.TEMPORAL_TLS_SERVER_NAME,
        apiKey: e.TEMPORAL_API_KEY,
      },
      uiUrl: e.TEMPORAL_UI_URL,
    },
    worker: {
      maxConcurrentSteps: e.WORKER_MAX_CONCURRENT_STEPS,
      stickyTimeoutSeconds: e.WORKER_STICKY_TIMEOUT_SECONDS,
      heartbeatTimeoutSeconds: e.WORKER_HEARTBEAT_TIMEOUT_SECONDS,
      shutdownGraceSeconds: e.WORKER_SHUTDOWN_GRACE_SECONDS,
      workflowCache: e.WORKER_WORKFLOW_CACHE,
    },
    memory: { heapGrowthPercent: e.HEAP_GROWTH_PERCENT, returnAfterBursts: e.HEAP_RETURN_AFTER_BURSTS },
    metrics: { workerPort: e.WORKER_METRICS_PORT, workerPortExplicit: source.WORKER_METRICS_PORT !== undefined, token: e.METRICS_TOKEN },
    servers: { healthIntervalSeconds: e.SERVER_HEALTH_INTERVAL_SECONDS, verifyMaxAttempts: e.SSH_VERIFY_MAX_ATTEMPTS, importVerifyConcurrency: e.IMPORT_VERIFY_CONCURRENCY },
    deployments: { stepOutputLimitBytes: e.STEP_OUTPUT_LIMIT_BYTES, maxActiveRunsPerOrganization: e.ORG_MAX_ACTIVE_RUNS },
    stepLogs: { limitBytes: e.STEP_LOG_LIMIT_BYTES, retentionDays: e.STEP_LOG_RETENTION_DAYS },
    transfers: { maxBytesPerSecond: e.TRANSFER_MAX_BYTES_PER_SECOND },
    ssh: { connectTimeoutMs: e.SSH_CONNECT_TIMEOUT_MS, maxChannelsPerConnection: e.SSH_MAX_CHANNELS_PER_CONNECTION, maxConnections: e.SSH_POOL_MAX, idleTimeoutMs: e.SSH_POOL_IDLE_SECONDS * 1000 },
    console: { sessionIdleSeconds: e.SESSION_IDLE_SECONDS, sessionMaxSeconds: e.SESSION_MAX_SECONDS, publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''), oidc: oidcConfig(e) },
    notifications: { retrySeconds: e.NOTIFICATION_RETRY_SECONDS, maxAttempts: e.NOTIFICATION_MAX_ATTEMPTS },
    audit: { checkpointMinutes: e.AUDIT_CHECKPOINT_MINUTES, retentionDays: e.AUDIT_RETENTION_DAYS, pendingSeconds: e.AUDIT_PENDING_SECONDS },
    schedules: { minIntervalSeconds: e.SCHEDULE_MIN_INTERVAL_SECONDS, sweepSeconds: e.SCHEDULE_SWEEP_SECONDS, accountingGraceSeconds: e.SCHEDULE_ACCOUNTING_GRACE_SECONDS },
    planner: {
      llm:
        e.LLM_BASE_URL && e.LLM_MODEL
          ? { baseUrl: e.LLM_BASE_URL, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL, maxAttempts: e.LLM_MAX_ATTEMPTS, maxReplans: e.LLM_MAX_REPLANS, timeoutMs: e.LLM_TIMEOUT_MS }
          : undefined,
    },
  });
}

/** A client certificate without its key (or the reverse) cannot be used. */
function halfClientCertificate(e: Env): Array<{ name: string; message: string }> {
  if (Boolean(e.TEMPORAL_TLS_CERT) === Boolean(e.TEMPORAL_TLS_KEY)) return [];
  const missing = e.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT';
  return [{ name: missing, message: 'required with its pair: mTLS needs both TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY' }];
}

/** Half an LLM configuration is a mistake, not a reason to fall back to the rules planner silently. */
function missingLlmVariables(e: Env): Array<{ name: string; message: string }> {
  const given = (['LLM_BASE_URL', 'LLM_MODEL', 'LLM_API_KEY'] as const).filter((name) => e[name] !== undefined);
  if (!given.length) return [];
  return (['LLM_BASE_URL', 'LLM_MODEL'] as const)
    .filter((name) => e[name] === undefined)
    .map((name) => ({ name, message: `required with ${given.join(' and ')} (the LLM planner needs both LLM_BASE_URL and LLM_MODEL)` }));
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An issuer without its client id (or the reverse) is a mistake; plain HTTP only to a provider on this machine. */
function oidcProblems(e: Env): Array<{ name: string; message: string }> {
  const problems: Array<{ name: string; message: string }> = [];
  if (e.OIDC_ISSUER_URL && !e.OIDC_CLIENT_ID) problems.push({ name: 'OIDC_CLIENT_ID', message: 'required with OIDC_ISSUER_URL' });
  if (!e.OIDC_ISSUER_URL && (e.OIDC_CLIENT_ID || e.OIDC_CLIENT_SECRET)) problems.push({ name: 'OIDC_ISSUER_URL', message: 'required with OIDC_CLIENT_ID and OIDC_CLIENT_SECRET' });
  if (e.OIDC_ISSUER_URL) {
    const url = new URL(e.OIDC_ISSUER_URL);
    // Tokens and codes cross this connection: in the clear only where nobody else can listen.
    if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) problems.push({ name: 'OIDC_ISSUER_URL', message: 'must be https (plain http only to a provider on this machine)' });
  }
  if (e.OIDC_ISSUER_URL && !e.OIDC_SCOPES.split(/\s+/).includes('openid')) problems.push({ name: 'OIDC_SCOPES', message: 'must include openid' });
  return problems;
}

function oidcConfig(e: Env): OidcConfig | undefined {
  if (!e.OIDC_ISSUER_URL || !e.OIDC_CLIENT_ID) return undefined;
  return {
    issuerUrl: e.OIDC_ISSUER_URL,
    clientId: e.OIDC_CLIENT_ID,
    clientSecret: e.OIDC_CLIENT_SECRET,
    scopes: e.OIDC_SCOPES,
    groupsClaim: e.OIDC_GROUPS_CLAIM,
    organization: e.OIDC_ORGANIZATION,
    createPeople: e.OIDC_CREATE_PEOPLE,
    displayName: e.OIDC_DISPLAY_NAME ?? new URL(e.OIDC_ISSUER_URL).host,
  };
}
