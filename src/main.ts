import type { Server as HttpServer } from 'node:http';
import mongoose from 'mongoose';
import { createApp } from './api/app';
import { activeConversationsAbout, createConversationService } from './api/conversations/service';
import { createMigrationPlanService } from './api/migration-plans/service';
import { createPlanner, describePlanner } from './domain/planner';
import { ConfigError, loadConfig, type Config } from './config';
import { connectDatabase } from './domain/database';
import { BinaryNotFoundError } from './embedded/binaries';
import { freePort } from './embedded/ports';
import { StackBusyError, startEmbeddedStack, type EmbeddedStack } from './embedded/stack';
import { createLogger, type Logger } from './logger';
import { listenForScrapes } from './api/observability/listener';
import { Metrics } from './api/observability/metrics';
import { readinessChecks } from './api/observability/readiness';
import { loadMasterKey, SecretBox } from './domain/secrets/secret-box';
import { createDeploymentService } from './api/deployments/service';
import { enableChangeStreamImages } from './api/realtime/relay';
import { attachRealtime } from './api/realtime/server';
import { createServerService } from './api/servers/service';
import { reconcileAtStart } from './worker/reconcile';
import { startQueueSweeper } from './worker/sweeps';
import { SshPool } from './domain/ssh/pool';
import { connectTemporal, WorkflowGateway } from './domain/temporal/client';
import { ensureSearchAttributes } from './domain/temporal/search-attributes';
import { createWorker } from './worker/temporal-worker';
import { bootstrapFirstToken } from './domain/tokens/service';

type Role = 'all' | 'api' | 'worker';

function roleFromArgs(argv: string[]): Role {
  const index = argv.indexOf('--role');
  const role = index >= 0 ? argv[index + 1] : 'all';
  if (role === 'all' || role === 'api' || role === 'worker') return role;
  throw new ConfigError(`--role must be all, api or worker (got "${role}")`);
}

function listen(app: ReturnType<typeof createApp>, host: string, port: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}

/** Runs cleanups newest first, once, however many times it is asked. */
function shutdownSequence(log: Logger) {
  const cleanups: Array<() => Promise<unknown>> = [];
  let running: Promise<void> | undefined;
  return {
    add: (cleanup: () => Promise<unknown>) => cleanups.push(cleanup),
    run: () =>
      (running ??= (async () => {
        for (const cleanup of [...cleanups].reverse()) await cleanup().catch((err) => log.error({ err }, 'error during shutdown'));
      })()),
  };
}

/** A signal this soon after the first is the same one, delivered twice; a later one exits at once. */
const SAME_SIGNAL_MS = 2000;

/**
 * Started by `npm start` / `npm run api|worker` (npm runs the script with `exec`, so npm is the
 * parent): npm forwards SIGTERM and SIGINT, but if npm itself is killed outright (SIGKILL) Bosun
 * would run on, orphaned. So when the launching npm is gone, Bosun stops as for a signal. Not for
 * node started directly (a service manager, an image's init, `nohup`): there the parent may go.
 */
function followLauncher(log: Logger, stop: () => void) {
  if (!process.env.npm_lifecycle_event) return;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    log.warn({ launcher }, 'npm, which started Bosun, is gone: shutting down');
    stop();
  }, 1000);
  timer.unref();
}

async function start(config: Config, role: Role, log: Logger) {
  const startedAt = Date.now();
  const shutdown = shutdownSequence(log);
  let exitCode = 0;
  let stoppingSince: number | undefined;
  const stop = () => {
    stoppingSince = Date.now();
    void shutdown.run().then(() => process.exit(exitCode));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stoppingSince === undefined) {
        log.info({ signal }, 'shutting down');
        return stop();
      }
      // Under `npm start` a terminal's Ctrl-C arrives twice (from the terminal, and forwarded by npm):
      // only a signal some time after the first is a second one.
      if (Date.now() - stoppingSince < SAME_SIGNAL_MS) return log.debug({ signal }, 'signal repeated (npm forwards it too): already shutting down');
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(exitCode || 130);
    });
  }

  followLauncher(log, () => {
    if (stoppingSince === undefined) stop();
  });

  try {
    if (role !== 'all' && (!config.mongo.uri || !config.temporal.address || !config.secretKey)) {
      throw new ConfigError(
        `--role ${role} runs against existing services: set MONGODB_URI, TEMPORAL_ADDRESS and BOSUN_SECRET_KEY ` +
          '(the same key in every API and worker process). `npm start` embeds the services.',
      );
    }
    let stack: EmbeddedStack | undefined;
    if (role === 'all') {
      stack = await startEmbeddedStack(config, log);
      shutdown.add(() => stack!.stop());
    }
    const mongoUri = stack?.mongoUri ?? config.mongo.uri!;
    const temporalAddress = stack?.temporalAddress ?? config.temporal.address!;

    await connectDatabase(mongoUri);
    shutdown.add(() => mongoose.disconnect());
    const { key, source: keySource } = loadMasterKey(config.secretKey, config.home);
    if (!config.secretKey && config.mongo.uri) {
      log.warn({ keyFile: keySource }, 'BOSUN_SECRET_KEY is unset: secrets are sealed with the key file under BOSUN_HOME');
    }
    const secretBox = new SecretBox(key);
    const temporalClient = await connectTemporal(
      { address: temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, security: stack ? undefined : config.temporal.security },
      stack?.temporalUiUrl ? 0 : 60_000,
    );
    shutdown.add(() => temporalClient.connection.close());
    const workflows = new WorkflowGateway(temporalClient, config.temporal.taskQueue, config.servers, config.temporal.uiUrl ?? stack?.temporalUiUrl);
    // The Temporal SDK (a worker's) serves its metrics on loopback; Bosun's /metrics appends them.
    const sdkMetricsAddress = role === 'api' ? undefined : `127.0.0.1:${await freePort(0)}`;
    const metrics = new Metrics({ temporalSdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics` });
    const observability = { metrics, readiness: readinessChecks(workflows), metricsToken: config.metrics.token };

    const lines: string[] = [];
    if (role !== 'api') {
      if (!stack?.temporalUiUrl) {
        // Temporal Cloud does not let a worker register them: they are added once in the namespace's settings.
        await ensureSearchAttributes(temporalClient, config.temporal.namespace).catch((err: Error) =>
          log.warn({ err: err.message }, 'could not register search attributes BosunOrganization, BosunServer, BosunDeployment (Keyword): add them to the namespace, or runs cannot start'),
        );
      }
      const sshPool = new SshPool({ ...config.ssh, log, onConnectionFailure: (kind) => metrics.sshConnectionFailed(kind) });
      metrics.trackSshPool(sshPool);
      const { worker, connection } = await createWorker(
        {
          address: temporalAddress,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          cacheDir: config.cacheDir,
          sdkMetricsAddress,
          // The embedded dev server speaks plain gRPC on loopback.
          security: stack ? undefined : config.temporal.security,
        },
        {
          secretBox,
          sshPool,
          log,
          healthIntervalSeconds: config.servers.healthIntervalSeconds,
          stepOutputLimitBytes: config.deployments.stepOutputLimitBytes,
          transferMaxBytesPerSecond: config.transfers.maxBytesPerSecond,
          planner: createPlanner(config.planner),
        },
      );
      const running = worker.run();
      shutdown.add(async () => {
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
        exitCode = 1;
        process.kill(process.pid, 'SIGTERM');
      });
      void reconcileAtStart(workflows, log);
      const stopSweeper = startQueueSweeper(workflows, log);
      shutdown.add(async () => stopSweeper());
      lines.push(`  worker      task queue "${config.temporal.taskQueue}"`);
      lines.push(`  planner     ${describePlanner(config.planner)}`);
      log.info({ address: sdkMetricsAddress }, 'Temporal SDK metrics served (appended to /metrics)');
    }

    // The API serves every metric of `npm start` on its own /metrics; a lone worker needs a listener.
    if (role === 'worker' && config.metrics.workerPort !== 0) {
      const { workerPort, workerPortExplicit } = config.metrics;
      const port = workerPortExplicit ? workerPort : await freePort(workerPort, config.http.host);
      const scrapes = await listenForScrapes({ ...observability, log }, config.http.host, port);
      shutdown.add(() => new Promise((resolve) => scrapes.close(resolve)));
      lines.push(`  metrics     http://${config.http.host}:${port}/metrics`);
    }

    if (role !== 'worker') {
      const app = createApp({
        log,
        http: config.http,
        servers: createServerService({ secretBox, workflows }),
        deployments: createDeploymentService({ workflows, log, maxActiveRuns: config.deployments.maxActiveRunsPerOrganization }),
        conversations: createConversationService({ workflows }),
        migrationPlans: createMigrationPlanService({ activeConversations: activeConversationsAbout }),
        secretBox,
        observability,
      });
      const port = config.http.portExplicit ? config.http.port : await freePort(config.http.port, config.http.host);
      await enableChangeStreamImages();
      const server = await listen(app, config.http.host, port);
      // Closing Socket.IO closes the HTTP server too.
      const realtime = attachRealtime(server, log, metrics);
      shutdown.add(() => realtime.close());
      lines.unshift(
        `  API         http://${config.http.host}:${port}/api/v1`,
        `  API docs    http://${config.http.host}:${port}/docs`,
        `  metrics     http://${config.http.host}:${port}/metrics`,
      );
      // Only `npm start` mints the first token, and only once the API is listening, so it is never lost.
      const firstToken = role === 'all' ? await bootstrapFirstToken() : null;
      if (firstToken) {
        lines.push(
          '',
          '  First start: created organization "default" and its admin token (shown only this once):',
          `    ${firstToken}`,
          `  Try: curl -H "Authorization: Bearer <token>" http://${config.http.host}:${port}/api/v1/servers`,
          '',
        );
      }
    }
    lines.push(`  MongoDB     ${config.mongo.uri ? '(external) MONGODB_URI' : mongoUri}`);
    lines.push(`  Temporal    ${temporalAddress}${stack?.temporalUiUrl ? `   Web UI ${stack.temporalUiUrl}` : ''}`);
    lines.push(`  data        ${config.home}`);
    process.stdout.write(`\nBosun ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s (role: ${role})\n${lines.join('\n')}\n\n`);
  } catch (error) {
    await shutdown.run();
    throw error;
  }
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  try {
    await start(config, roleFromArgs(process.argv), log);
  } catch (error) {
    const known = error instanceof ConfigError || error instanceof BinaryNotFoundError || error instanceof StackBusyError;
    if (known) process.stderr.write(`\nBosun could not start: ${(error as Error).message}\n`);
    else log.fatal({ err: error }, 'Bosun could not start');
    process.exit(1);
  }
}

void main();
