import mongoose from 'mongoose';
import { createDeploymentService } from './api/deployments/service';
import { Metrics } from './api/observability/metrics';
import { readinessChecks } from './api/observability/readiness';
import type { Config } from './config';
import { connectDatabase } from './domain/database-connection';
import { ensureStepLogRetention } from './domain/execution/step-logs';
import { loadMasterKey, SecretBox } from './domain/secrets/secret-box';
import { connectTemporal, WorkflowGateway } from './domain/temporal/client';
import { freePort } from './embedded/ports';
import type { Logger } from './logger';
import { startApiRole } from './roles/api';
import type { ComposeOptions, Composed, Role, RoleContext, Services } from './roles/context';
import { serveWorkerScrapes, startWorkerRole } from './roles/worker';

export type { ComposeOptions, Composed, Role, Services } from './roles/context';

/**
 * Builds one role of Bosun from its configuration, on MongoDB and Temporal at `services`: the API
 * (HTTP and Socket.IO, roles/api.ts), the worker (Temporal worker, start-up reconcile, sweeps,
 * roles/worker.ts), or both. `src/main.ts` and the tests' harness both build Bosun here, so the tests
 * run the Bosun production runs.
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
    const temporal = await connectTemporal(
      { address: services.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, security: embedded ? undefined : config.temporal.security },
      embedded ? 0 : 60_000,
    );
    cleanups.push(() => temporal.connection.close());
    const workflows = new WorkflowGateway(temporal, config.temporal.taskQueue, config.servers, config.temporal.uiUrl ?? services.embeddedTemporalUiUrl);
    // The Temporal SDK (a worker's) serves its metrics on loopback; Bosun's /metrics appends them.
    const sdkMetricsAddress = role === 'api' ? undefined : `127.0.0.1:${await freePort(0)}`;
    const metrics = new Metrics({ temporalSdkMetricsUrl: sdkMetricsAddress && `http://${sdkMetricsAddress}/metrics` });
    const ctx: RoleContext = {
      config,
      services,
      log,
      options,
      secretBox,
      temporal,
      workflows,
      metrics,
      observability: { metrics, readiness: readinessChecks(workflows), metricsToken: config.metrics.token },
      deployments: createDeploymentService({ workflows, log, secretBox, maxActiveRuns: config.deployments.maxActiveRunsPerOrganization }),
      countTick: (outcome: string) => metrics.scheduleTicks.inc({ outcome }),
      composed: { temporal, workflows, lines: [], stop },
      cleanups,
    };
    if (sdkMetricsAddress) await startWorkerRole(ctx, sdkMetricsAddress, embedded);
    // The API serves every metric of `npm start` on its own /metrics; a lone worker needs a listener.
    if (role === 'worker' && config.metrics.workerPort !== 0) await serveWorkerScrapes(ctx);
    if (role !== 'worker') await startApiRole(ctx);
    return ctx.composed;
  } catch (error) {
    await stop();
    throw error;
  }
}
