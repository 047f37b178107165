import { listenForScrapes } from '../api/observability/listener';
import { configAdapters } from '../api/config/kinds';
import { configSourceSyncer } from '../api/config/source-sync';
import { stageRunStarter } from '../api/pipelines/stage-runs';
import { createPipelineRunService } from '../api/pipelines/run-service';
import { scheduledRunStarter } from '../api/schedules/ticks';
import { createPlanner, describePlanner } from '../domain/planner';
import { SshPool } from '../domain/ssh/pool';
import { warnIfTooFewOpenFiles } from '../domain/ssh/pool-options';
import { ensureSearchAttributes } from '../domain/temporal/search-attributes';
import { ensureSingletonWorkflows } from '../domain/temporal/singleton-workflows';
import { freePort } from '../embedded/ports';
import { periodically } from '../worker/periodic';
import { reconcileAtStart } from '../worker/reconcile';
import { startScheduleSweeper } from '../worker/schedule-ledger';
import { startQueueSweeper } from '../worker/sweeps';
import { createWorker } from '../worker/temporal-worker';
import type { RoleContext } from './context';

/*
 * The worker's part of a Bosun (roles all and worker): the Temporal worker with every activity's
 * dependencies, the start-up reconcile, the one-of-a-kind workflows, and the sweeps.
 */

/** How long a config source's fetch of its repository may take. */
const CONFIG_FETCH_TIMEOUT_MS = 120_000;

/** The worker and what runs beside it, started; `sdkMetricsAddress` is where the Temporal SDK serves its metrics. */
export async function startWorkerRole(ctx: RoleContext, sdkMetricsAddress: string, embedded: boolean): Promise<void> {
  const { config, log, options, temporal, workflows, composed, cleanups } = ctx;
  if (!embedded) {
    // Temporal Cloud does not let a worker register them: they are added once in the namespace's settings.
    await ensureSearchAttributes(temporal, config.temporal.namespace).catch((err: Error) =>
      log.warn({ err: err.message }, 'could not register search attributes BosunOrganization, BosunServer, BosunDeployment, BosunActor (Keyword): add them to the namespace, or runs cannot start'),
    );
  }
  await runWorker(ctx, sdkMetricsAddress, embedded);
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
  cleanups.push(startScheduleSweeper(workflows, log, ctx.countTick, options.scheduleSweepMs ?? config.schedules.sweepSeconds * 1000, config.schedules.accountingGraceSeconds * 1000));
  composed.lines.push(`  worker      task queue "${config.temporal.taskQueue}"`);
  composed.lines.push(`  planner     ${options.planner ? options.planner.name : describePlanner(config.planner)}`);
  log.info({ address: sdkMetricsAddress }, 'Temporal SDK metrics served (appended to /metrics)');
}

/** The Temporal worker running, its stop (the shutdown, then its SSH pool and connection) among the clean-ups. */
async function runWorker(ctx: RoleContext, sdkMetricsAddress: string, embedded: boolean): Promise<void> {
  const { config, services, log, options, secretBox, workflows, metrics, deployments, countTick, composed, cleanups } = ctx;
  const sshPool = new SshPool({
    ...config.ssh,
    log,
    onConnectionFailure: (kind) => metrics.sshConnectionFailed(kind),
    onConnectionOpened: () => metrics.sshConnectionsOpened.inc(),
    onBoundEviction: () => metrics.sshPoolEvictions.inc(),
  });
  metrics.trackSshPool(sshPool);
  warnIfTooFewOpenFiles(config.ssh.maxConnections, log);
  // Aborted as the worker begins to stop: its long activities (the audit chainer, the notification drain) hand their work back at once.
  const workerStopping = new AbortController();
  const { worker, connection } = await createWorker(
    {
      address: services.temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      cacheDir: config.cacheDir,
      sdkMetricsAddress,
      security: embedded ? undefined : config.temporal.security,
      maxConcurrentSteps: config.worker.maxConcurrentSteps,
      stickyTimeoutSeconds: config.worker.stickyTimeoutSeconds,
      heartbeatTimeoutSeconds: config.worker.heartbeatTimeoutSeconds,
      shutdownGraceSeconds: config.worker.shutdownGraceSeconds,
      workflowCache: config.worker.workflowCache,
      followHandoffs: options.followHandoffs,
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
      scheduledRuns: scheduledRunStarter({ deployments, pipelineRuns: createPipelineRunService({ workflows, secretBox, deployments, log }), secretBox, log, countTick }),
      stageRuns: stageRunStarter({ deployments, secretBox }),
      configSyncer: configSourceSyncer({
        secretBox,
        adapters: configAdapters({ schedules: workflows.schedules, runs: workflows.runs, secretBox, minIntervalSeconds: config.schedules.minIntervalSeconds, log }),
        log,
        fetchTimeoutMs: CONFIG_FETCH_TIMEOUT_MS,
      }),
      // PUBLIC_URL, or this process's API once it listens (a lone worker without PUBLIC_URL sends no links).
      consoleUrl: () => config.console.publicUrl ?? composed.url,
      notificationMetrics: {
        count: (channel, outcome) => metrics.notifications.inc({ channel, outcome }),
        delivered: (seconds) => metrics.notificationLatency.observe(seconds),
      },
      audit: { checkpointMinutes: config.audit.checkpointMinutes, retentionDays: config.audit.retentionDays, stopping: workerStopping.signal },
      workerStopping: workerStopping.signal,
      notificationRetrySeconds: config.notifications.retrySeconds,
      notificationMaxAttempts: config.notifications.maxAttempts,
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
}

/** A lone worker's own listener for /metrics, /healthz and /readyz (the API serves them on its port otherwise). */
export async function serveWorkerScrapes(ctx: RoleContext): Promise<void> {
  const { config, log, observability, composed, cleanups } = ctx;
  const { workerPort, workerPortExplicit } = config.metrics;
  const port = workerPortExplicit ? workerPort : await freePort(workerPort, config.http.host);
  const scrapes = await listenForScrapes({ ...observability, log }, config.http.host, port);
  cleanups.push(() => new Promise((resolve) => scrapes.close(resolve)));
  composed.lines.push(`  metrics     http://${config.http.host}:${port}/metrics`);
}
