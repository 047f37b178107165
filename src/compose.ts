import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import mongoose from 'mongoose';
import { createApp } from './api/app';
import { consoleBundle } from './console/bundle';
import { activeConversationsAbout, createConversationService } from './api/conversations/service';
import { createDeploymentService } from './api/deployments/service';
import { createFreezeService } from './api/freezes/service';
import { createMigrationPlanService } from './api/migration-plans/service';
import { createNotificationService } from './api/notifications/service';
import { listenForScrapes } from './api/observability/listener';
import { Metrics } from './api/observability/metrics';
import { readinessChecks } from './api/observability/readiness';
import { enableChangeStreamImages } from './api/realtime/relay';
import { attachRealtime } from './api/realtime/server';
import { createServerService } from './api/servers/service';
import type { Config } from './config';
import { connectDatabase } from './domain/database-connection';
import { adoptTokensWithoutIdentity } from './domain/tokens/service';
import { keepAccessFresh } from './api/access/freshness';
import { ensureStepLogRetention } from './domain/execution/step-logs';
import { createPlanner, describePlanner } from './domain/planner';
import type { Planner } from './domain/planner/types';
import { loadMasterKey, SecretBox } from './domain/secrets/secret-box';
import { SshPool } from './domain/ssh/pool';
import { connectTemporal, WorkflowGateway } from './domain/temporal/client';
import { ensureSearchAttributes } from './domain/temporal/search-attributes';
import { ensureSingletonWorkflows } from './domain/temporal/singleton-workflows';
import { freePort } from './embedded/ports';
import type { Logger } from './logger';
import { reconcileAtStart } from './worker/reconcile';
import { startQueueSweeper } from './worker/sweeps';
import { startScheduleSweeper } from './worker/schedule-ledger';
import { periodically } from './worker/periodic';
import { scheduledRunStarter } from './api/schedules/ticks';
import { createScheduleService } from './api/schedules/service';
import { createWorker } from './worker/temporal-worker';

export type Role = 'all' | 'api' | 'worker';

export interface Services {
  mongoUri: string;
  temporalAddress: string;
  /** The embedded dev server's Web UI: plain gRPC on loopback, search attributes registered at its start. */
  embeddedTemporalUiUrl?: string;
}

export interface ComposeOptions {
  /** The planner conversations use; from the configuration unless given. */
  planner?: Planner;
  /** How often a worker looks for queued runs whose start or wake was lost. */
  queueSweepMs?: number;
  /** How often the worker accounts for schedules' skipped ticks (tests: shorter). */
  scheduleSweepMs?: number;
  /** How often a worker starts the notification dispatcher and the audit trail's workflows if they are not running (a minute). */
  singletonsEveryMs?: number;
  /** How long a step runs as a local activity before its hand-off (STEP_HANDOFF_AFTER_MS unless given). */
  stepHandoffAfterMs?: number;
  /** Socket.IO subscriptions one connection may hold. */
  subscriptionsPerConnection?: number;
  /** Called when the worker stops with an error (after it is logged). */
  onWorkerFailure?: (err: unknown) => void;
}

export interface Composed {
  /** The API's address (roles all and api). */
  url?: string;
  httpServer?: HttpServer;
  app?: ReturnType<typeof createApp>;
  temporal: Client;
  workflows: WorkflowGateway;
  /** The banner's lines for what this role serves. */
  lines: string[];
  /** Stops everything this role started, newest first; once, however many times it is asked. */
  stop(): Promise<void>;
}

/** The API listening; a port in use (or not allowed) is refused with a message saying which, never a server that does not listen. */
function listen(app: ReturnType<typeof createApp>, host: string, port: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    // Express 5 hands a listen error to this callback rather than throwing it.
    const server = app.listen(port, host, (error?: Error) => {
      if (!error) return resolve(server);
      const why = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use (another Bosun? set PORT)' : error.message;
      reject(Object.assign(new Error(`Cannot listen on ${host}:${port}: ${why}`), { cause: error }));
    });
  });
}

/**
 * Builds one role of Bosun from its configuration, on MongoDB and Temporal at `services`: the API
 * (HTTP and Socket.IO), the worker (Temporal worker, start-up reconcile, sweeps), or both. `src/main.ts`
 * and the tests' harness both build Bosun here, so the tests run the Bosun production runs.
 */
export async function compose(config: Readonly<Config>, role: Role, services: Services, log: Logger, options: ComposeOptions = {}): Promise<Composed> {
  const cleanups: Array<() => Promise<unknown>> = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => log.error({ err }, 'error during shutdown'));
    })());
  const embedded = services.embeddedTemporalUiUrl !== undefined;
  try {
    await connectDatabase(services.mongoUri);
    cleanups.push(() => mongoose.disconnect());
    await ensureStepLogRetention(config.stepLogs.retentionDays).catch((err: Error) => log.warn({ err: err.message }, 'could not set the retention of steps’ whole logs'));
    const { key, source: keySource } = loadMasterKey(config.secretKey, config.home);
    if (!config.secretKey && config.mongo.uri) {
      log.warn({ keyFile: keySource }, 'BOSUN_SECRET_KEY is unset: secrets are sealed with the key file under BOSUN_HOME');
    }
    const secretBox = new SecretBox(key);
    const security = embedded ? undefined : config.temporal.security;
    const temporal = await connectTemporal(
      { address: services.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, security },
      embedded ? 0 : 60_000,
    );
    cleanups.push(() => temporal.connection.close());
    const workflows = new WorkflowGateway(temporal, config.temporal.taskQueue, config.servers, config.temporal.uiUrl ?? services.embeddedTemporalUiUrl);
    // The Temporal SDK (a worker's) serves its metrics on loopback; Bosun's /metrics appends them.
    const sdkMetricsAddress = role === 'api' ? undefined : `127.0.0.1:${await freePort(0)}`;
    const metrics = new Metrics({ temporalSdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics` });
    const observability = { metrics, readiness: readinessChecks(workflows), metricsToken: config.metrics.token };
    const composed: Composed = { temporal, workflows, lines: [], stop };
    // Triggers are the API's, and a schedule's tick (run by the worker) starts its run through the same path.
    const deployments = createDeploymentService({ workflows, log, secretBox, maxActiveRuns: config.deployments.maxActiveRunsPerOrganization });
    const countTick = (outcome: string) => metrics.scheduleTicks.inc({ outcome });

    if (role !== 'api') {
      if (!embedded) {
        // Temporal Cloud does not let a worker register them: they are added once in the namespace's settings.
        await ensureSearchAttributes(temporal, config.temporal.namespace).catch((err: Error) =>
          log.warn({ err: err.message }, 'could not register search attributes BosunOrganization, BosunServer, BosunDeployment, BosunActor (Keyword): add them to the namespace, or runs cannot start'),
        );
      }
      const sshPool = new SshPool({ ...config.ssh, log, onConnectionFailure: (kind) => metrics.sshConnectionFailed(kind) });
      metrics.trackSshPool(sshPool);
      // Aborted as the worker begins to stop: its long activities (the audit chainer, the notification drain) hand their work back at once.
      const workerStopping = new AbortController();
      const { worker, connection } = await createWorker(
        {
          address: services.temporalAddress,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          cacheDir: config.cacheDir,
          sdkMetricsAddress,
          security,
          maxConcurrentSteps: config.worker.maxConcurrentSteps,
        },
        {
          secretBox,
          sshPool,
          log,
          healthIntervalSeconds: config.servers.healthIntervalSeconds,
          stepOutputLimitBytes: config.deployments.stepOutputLimitBytes,
          stepLogLimitBytes: config.stepLogs.limitBytes,
          transferMaxBytesPerSecond: config.transfers.maxBytesPerSecond,
          planner: options.planner ?? createPlanner(config.planner),
          wakeQueue: (serverId, organizationId, runId) => workflows.queues.wake(serverId, organizationId, runId),
          stepHandoffAfterMs: options.stepHandoffAfterMs,
          scheduledRuns: scheduledRunStarter({ deployments, secretBox, log, countTick }),
          // PUBLIC_URL, or this process's API once it listens (a lone worker without PUBLIC_URL sends no links).
          consoleUrl: () => config.console.publicUrl ?? composed.url,
          notificationMetrics: {
            count: (channel, outcome) => metrics.notifications.inc({ channel, outcome }),
            delivered: (seconds) => metrics.notificationLatency.observe(seconds),
          },
          audit: { checkpointMinutes: config.audit.checkpointMinutes, retentionDays: config.audit.retentionDays, stopping: workerStopping.signal },
          workerStopping: workerStopping.signal,
        },
      );
      const running = worker.run();
      cleanups.push(async () => {
        // The chainer and the notification drain hand their activities back at once rather than holding the shutdown for its grace time.
        workerStopping.abort();
        worker.shutdown();
        try {
          await running;
        } finally {
          await sshPool.close();
          await connection.close();
        }
      });
      running.catch((err) => {
        log.fatal({ err }, 'worker stopped');
        options.onWorkerFailure?.(err);
      });
      void reconcileAtStart(workflows, log);
      // The notification dispatcher and the audit trail's chainer and clock, one each per Bosun: started
      // if they are not running, now and every minute (Temporal may be away; until then events and
      // entries wait in their outboxes). Stopping waits for a start in flight.
      const singletons = () => ensureSingletonWorkflows(temporal, config.temporal.taskQueue);
      const singletonsFailed = (err: unknown) =>
        log.warn({ err: (err as Error).message }, 'could not start the notification dispatcher and the audit trail’s workflows; trying again in a minute');
      await singletons().catch(singletonsFailed);
      cleanups.push(periodically(options.singletonsEveryMs ?? 60_000, singletons, singletonsFailed, { now: false }));
      cleanups.push(startQueueSweeper(workflows, log, options.queueSweepMs));
      // Temporal Schedules reconciled with their documents at start (and every few minutes); skipped ticks accounted for.
      cleanups.push(startScheduleSweeper(workflows, log, countTick, options.scheduleSweepMs));
      composed.lines.push(`  worker      task queue "${config.temporal.taskQueue}"`);
      composed.lines.push(`  planner     ${options.planner ? options.planner.name : describePlanner(config.planner)}`);
      log.info({ address: sdkMetricsAddress }, 'Temporal SDK metrics served (appended to /metrics)');
    }

    // The API serves every metric of `npm start` on its own /metrics; a lone worker needs a listener.
    if (role === 'worker' && config.metrics.workerPort !== 0) {
      const { workerPort, workerPortExplicit } = config.metrics;
      const port = workerPortExplicit ? workerPort : await freePort(workerPort, config.http.host);
      const scrapes = await listenForScrapes({ ...observability, log }, config.http.host, port);
      cleanups.push(() => new Promise((resolve) => scrapes.close(resolve)));
      composed.lines.push(`  metrics     http://${config.http.host}:${port}/metrics`);
    }

    if (role !== 'worker') {
      // Before any request: an older version's tokens become service accounts' (nothing gains or loses access).
      const adopted = await adoptTokensWithoutIdentity();
      if (adopted) log.info({ tokens: adopted }, 'tokens of an older version now belong to service accounts of their names');
      // Identities' grants kept between requests while every change to them is heard.
      const freshAccess = keepAccessFresh(log);
      cleanups.push(() => freshAccess.close());
      const sessions = { idleSeconds: config.console.sessionIdleSeconds, maxSeconds: config.console.sessionMaxSeconds };
      const bundle = await consoleBundle(config.cacheDir, log);
      const app = createApp({
        log,
        http: config.http,
        servers: createServerService({ secretBox, workflows }),
        deployments,
        schedules: createScheduleService({ schedules: workflows.schedules, findDeployment: deployments.findDeployment, secretBox, log, countTick }),
        conversations: createConversationService({ workflows }),
        freezes: createFreezeService({ workflows: workflows.runs, log }),
        migrationPlans: createMigrationPlanService({ activeConversations: activeConversationsAbout }),
        notifications: createNotificationService({ secretBox }),
        secretBox,
        sessions,
        signIn: { oidc: config.console.oidc, publicUrl: config.console.publicUrl },
        console: bundle,
        observability,
        auditPendingSeconds: config.audit.pendingSeconds,
      });
      const port = config.http.portExplicit ? config.http.port : await freePort(config.http.port, config.http.host);
      await enableChangeStreamImages();
      const httpServer = await listen(app, config.http.host, port);
      // Closing Socket.IO closes the HTTP server too.
      const realtime = attachRealtime(httpServer, log, metrics, sessions, deployments, { subscriptionsPerConnection: options.subscriptionsPerConnection });
      cleanups.push(() => realtime.close());
      const base = `http://${config.http.host}:${(httpServer.address() as AddressInfo).port}`;
      Object.assign(composed, { app, httpServer, url: base });
      composed.lines.unshift(`  console     ${base}/`, `  API         ${base}/api/v1`, `  API docs    ${base}/docs`, `  metrics     ${base}/metrics`);
    }
    return composed;
  } catch (error) {
    await stop();
    throw error;
  }
}
