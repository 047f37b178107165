import type { Server as HttpServer } from 'node:http';
import type { Client } from '@temporalio/client';
import type { createApp } from '../api/app';
import type { createDeploymentService } from '../api/deployments/service';
import type { Metrics } from '../api/observability/metrics';
import type { readinessChecks } from '../api/observability/readiness';
import type { Config } from '../config';
import type { Planner } from '../domain/planner/types';
import type { SecretBox } from '../domain/secrets/secret-box';
import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';

/*
 * What compose() hands each role it builds (roles/worker.ts, roles/api.ts): the configuration, the
 * connections and services both share, and where a role leaves its clean-ups and banner lines.
 */

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
  /** How often the worker accounts for schedules' skipped ticks (SCHEDULE_SWEEP_SECONDS unless given). */
  scheduleSweepMs?: number;
  /** How often a worker starts the notification dispatcher and the audit trail's workflows if they are not running (a minute). */
  singletonsEveryMs?: number;
  /** How long a step runs as a local activity before its hand-off (STEP_HANDOFF_AFTER_MS unless given). */
  stepHandoffAfterMs?: number;
  /** Tests only: false leaves the worker's own task queue (where handed-off steps are followed) unpolled. */
  followHandoffs?: boolean;
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

export interface RoleContext {
  config: Readonly<Config>;
  services: Services;
  log: Logger;
  options: ComposeOptions;
  secretBox: SecretBox;
  temporal: Client;
  workflows: WorkflowGateway;
  metrics: Metrics;
  observability: { metrics: Metrics; readiness: ReturnType<typeof readinessChecks>; metricsToken?: string };
  /** Triggers are the API's, and a schedule's tick (run by the worker) starts its run through the same path. */
  deployments: ReturnType<typeof createDeploymentService>;
  countTick: (outcome: string) => void;
  /** What compose() answers: a role adds its address, app and banner lines. */
  composed: Composed;
  /** Run newest first when the role stops. */
  cleanups: Array<() => Promise<unknown>>;
}
