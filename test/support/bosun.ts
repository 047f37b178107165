import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import pino from 'pino';
import type { DestinationStream } from 'pino';
import supertest from 'supertest';
import { createApp } from '../../src/api/app';
import { connectDatabase } from '../../src/domain/database';
import { embeddedMongoUri } from '../../src/embedded/mongod';
import { createLogger } from '../../src/logger';
import { Metrics } from '../../src/api/observability/metrics';
import { readinessChecks } from '../../src/api/observability/readiness';
import { SecretBox } from '../../src/domain/secrets/secret-box';
import { createDeploymentService } from '../../src/api/deployments/service';
import { startQueueSweeper } from '../../src/worker/sweeps';
import { activeConversationsAbout, createConversationService } from '../../src/api/conversations/service';
import { createMigrationPlanService } from '../../src/api/migration-plans/service';
import { RulesPlanner } from '../../src/domain/planner/rules';
import type { Planner } from '../../src/domain/planner/types';
import { enableChangeStreamImages } from '../../src/api/realtime/relay';
import { attachRealtime } from '../../src/api/realtime/server';
import { createServerService } from '../../src/api/servers/service';
import { SshPool } from '../../src/domain/ssh/pool';
import { connectTemporal, WorkflowGateway } from '../../src/domain/temporal/client';
import { createWorker } from '../../src/worker/temporal-worker';
import type { Scope } from '../../src/domain/tokens/scopes';
import { createToken } from '../../src/domain/tokens/service';
import { sharedServices } from './shared';
import { FINAL_CONVERSATION_STATUSES } from '../../src/domain/conversations/model';
import { FINAL_RUN_STATUSES } from '../../src/domain/deployments/model';

export interface BosunOptions {
  healthIntervalSeconds?: number;
  verifyMaxAttempts?: number;
  rateLimitPerMinute?: number;
  /** How often the worker side looks for queued runs whose wake was lost. */
  queueSweepMs?: number;
  bodyLimitBytes?: number;
  stepOutputLimitBytes?: number;
  /** Seal with one master key in the API and open with another in the worker (a misconfiguration). */
  workerMasterKey?: Buffer;
  /** The built-in rules unless given. */
  planner?: Planner;
  /** false: no worker, as while every worker is down (workflows start; nothing runs them). */
  worker?: boolean;
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
}

/**
 * A whole Bosun (HTTP app and worker) inside the test process, on the shared mongod and Temporal,
 * with a database and task queue of its own so test files never see each other's data.
 */
export async function startBosun(options: BosunOptions = {}) {
  const services = sharedServices();
  const id = randomBytes(4).toString('hex');
  const database = `bosun_test_${id}`;
  const mongoUri = embeddedMongoUri(services.mongoPort, database);
  await connectDatabase(mongoUri);
  const log = options.logTo
    ? createLogger(options.logLevel ?? 'trace', 'bosun', options.logTo)
    : process.env.TEST_LOG_LEVEL
      ? createLogger(process.env.TEST_LOG_LEVEL)
      : createLogger('debug', 'bosun', pino.destination({ dest: services.logFile, append: true, sync: true }));
  const metrics = new Metrics();
  const secretBox = new SecretBox(randomBytes(32));
  const taskQueue = `bosun-test-${id}`;
  const temporal = await connectTemporal({ address: services.temporalAddress, namespace: 'default', taskQueue });
  const workflows = new WorkflowGateway(temporal, taskQueue, {
    verifyMaxAttempts: options.verifyMaxAttempts ?? 3,
    healthIntervalSeconds: options.healthIntervalSeconds ?? 60,
  }, options.temporalUiUrl);
  const sshPool = new SshPool({ connectTimeoutMs: 5000, maxChannelsPerConnection: 8, log, onConnectionFailure: (kind) => metrics.sshConnectionFailed(kind) });
  metrics.trackSshPool(sshPool);
  const started = options.worker === false ? null : await createWorker(
    { address: services.temporalAddress, namespace: 'default', taskQueue, cacheDir: services.cacheDir },
    {
      secretBox: options.workerMasterKey ? new SecretBox(options.workerMasterKey) : secretBox,
      sshPool,
      log,
      healthIntervalSeconds: options.healthIntervalSeconds ?? 60,
      stepOutputLimitBytes: options.stepOutputLimitBytes ?? 128 * 1024,
      planner: options.planner ?? new RulesPlanner(),
    },
  );
  const running = started?.worker.run();
  const stopSweeper = startQueueSweeper(workflows, log, options.queueSweepMs ?? 10_000);
  const app = createApp({
    log,
    http: { bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024, rateLimitPerMinute: options.rateLimitPerMinute ?? 10_000 },
    servers: createServerService({ secretBox, workflows }),
    deployments: createDeploymentService({ workflows, log, maxActiveRuns: options.maxActiveRuns }),
    conversations: createConversationService({ workflows }),
    migrationPlans: createMigrationPlanService({ activeConversations: activeConversationsAbout }),
    secretBox,
    observability: { metrics, readiness: readinessChecks(workflows), metricsToken: options.metricsToken },
  });

  await enableChangeStreamImages();
  const httpServer = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const realtime = attachRealtime(httpServer, log, metrics, { subscriptionsPerConnection: options.subscriptionsPerConnection });
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;

  return {
    api: supertest(httpServer),
    /** The Express app itself, for tests that look at its routes. */
    app,
    /** Where the HTTP API and Socket.IO listen, for clients other than supertest. */
    url,
    temporal,
    sshd: services.sshd,
    services,
    mongoUri,
    /** A fresh API token of an organization (created on first mention). */
    async token(org: string, scopes: Scope[] = ['admin'], name = `token-${randomBytes(3).toString('hex')}`) {
      return (await createToken({ org, name, scopes })).token;
    },
    async stop() {
      stopSweeper();
      await realtime.close();
      started?.worker.shutdown();
      await running;
      await sshPool.close();
      await started?.connection.close();
      await temporal.connection.close();
      await mongoose.connection.dropDatabase();
      await mongoose.disconnect();
    },
  };
}

export type Bosun = Awaited<ReturnType<typeof startBosun>>;

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A run (or conversation) that reached a final status: what a test waits for. */
export const runEnded = <T extends { status: string }>(run: T) => (FINAL_RUN_STATUSES as readonly string[]).includes(run.status);
export const conversationEnded = <T extends { status: string }>(conversation: T) => (FINAL_CONVERSATION_STATUSES as readonly string[]).includes(conversation.status);

/** Polls until check() returns a value that satisfies done, or fails with the last value seen. */
export async function eventually<T>(check: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await check();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`Condition not met after ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
    last = await check();
  }
  return last;
}

/** Adds a server on the shared sshd (a distinct loopback address per server) and waits until it is verified. */
export async function addVerifiedServer(bosun: Bosun, token: string, host = '127.0.0.1', auth: 'private_key' | 'password' = 'private_key') {
  const { port, username, privateKey, password } = bosun.sshd;
  const credentials = auth === 'private_key' ? { auth_method: auth, private_key: privateKey } : { auth_method: auth, password };
  const created = await bosun.api.post('/api/v1/servers').set(bearer(token)).send({ title: `srv-${host}`, host, port, username, ...credentials });
  if (created.status !== 201) throw new Error(`could not add server: ${JSON.stringify(created.body)}`);
  const id = created.body.data.id as string;
  await eventually(async () => (await bosun.api.get(`/api/v1/servers/${id}`).set(bearer(token))).body.data.status, (s) => s === 'verified');
  return id;
}

/** Triggers a deployment and polls the run until it reaches a final status. */
export async function runToEnd(bosun: Bosun, token: string, deploymentId: string, timeoutMs = 60_000) {
  const trigger = await bosun.api.post(`/api/v1/deployments/${deploymentId}/run`).set(bearer(token));
  if (trigger.status !== 202) throw new Error(`trigger failed: ${JSON.stringify(trigger.body)}`);
  return eventually(
    async () => (await bosun.api.get(`/api/v1/deployments/${deploymentId}/runs/${trigger.body.run_id}`).set(bearer(token))).body.data,
    runEnded,
    timeoutMs,
  );
}

/** Starts a conversation (a server's by default) and polls it until it reaches a final status. */
export async function conversationToEnd<C = Record<string, unknown>>(bosun: Bosun, token: string, body: { chatable_id: string; message: string; chatable_type?: string }, timeoutMs = 60_000) {
  const started = await bosun.api.post('/api/v1/conversations').set(bearer(token)).send({ chatable_type: 'server', ...body });
  if (started.status !== 201) throw new Error(`could not start the conversation: ${JSON.stringify(started.body)}`);
  return eventually(
    async () => (await bosun.api.get(`/api/v1/conversations/${started.body.data.id}`).set(bearer(token))).body.data as C & { status: string },
    conversationEnded,
    timeoutMs,
  );
}
