import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FINAL_CONVERSATION_STATUSES } from '../../domain/conversations/model';
import { FINAL_RUN_STATUSES } from '../../domain/deployments/model';
import type { SshErrorKind } from '../../domain/ssh/errors';

/** Steps take from milliseconds (`true`) to hours (a backup): seconds. */
const STEP_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400];

export type StepKind = 'deployment' | 'conversation';

/** What the SSH pool gauges read: connections open (or opening), and of those the idle ones. */
interface SshPoolCounts {
  readonly size: number;
  readonly idle: number;
}

/**
 * One process's metrics, in a registry of its own (several Bosuns share a test process). The
 * Temporal SDK's metrics come from its own exporter (Rust core) and are appended to the text.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly sshPools = new Set<SshPoolCounts>();
  private readonly socketCounters = new Set<() => number>();

  readonly httpRequestDuration = new Histogram({
    name: 'bosun_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern (never raw ids; "(unmatched)" when no route matched) and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly runsFinished = new Counter({
    name: 'bosun_runs_finished_total',
    help: 'Deployment runs that reached a final status (success, failed, cancelled), seen in the runs change stream',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly conversationsFinished = new Counter({
    name: 'bosun_conversations_finished_total',
    help: 'Conversations that reached a final status (completed, failed, cancelled), seen in the conversations change stream',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly scheduleTicks = new Counter({
    name: 'bosun_schedule_ticks_total',
    help: 'Schedules’ ticks recorded by this process, by outcome: fired (a run started), or why not (missed, overlap, frozen, paused, forbidden, refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly notifications = new Counter({
    name: 'bosun_notifications_total',
    help: 'Notification delivery attempts and ends, by channel (its id) and outcome: delivered, failed_attempt (retried), failed, dead, dropped',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly notificationLatency = new Histogram({
    name: 'bosun_notification_delivery_seconds',
    help: 'From an event to its delivery (2xx from the receiver), retries included',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
    registers: [this.registry],
  });

  readonly stepDuration = new Histogram({
    name: 'bosun_step_duration_seconds',
    help: 'Steps that ran, from their start to their final status, by kind (deployment, conversation) and final status',
    labelNames: ['kind', 'status'] as const,
    buckets: STEP_BUCKETS,
    registers: [this.registry],
  });

  readonly sshConnectionsOpened = new Counter({
    name: 'bosun_ssh_connections_opened_total',
    help: 'SSH connections the worker opened (each a login on its server): for commands, health checks and jump hosts',
    registers: [this.registry],
  });

  readonly sshPoolEvictions = new Counter({
    name: 'bosun_ssh_pool_evictions_total',
    help: 'SSH connections closed, or not kept after a health check, only because the pool was at SSH_POOL_MAX: their servers log in again at their next use',
    registers: [this.registry],
  });

  readonly sshConnectionFailures = new Counter({
    name: 'bosun_ssh_connection_failures_total',
    help: 'SSH connections that could not be opened, or broke, by kind (transport, timeout, authentication, host_key_mismatch, key_invalid)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor(private readonly options: { temporalSdkMetricsUrl?: string } = {}) {
    const pools = this.sshPools;
    const sockets = this.socketCounters;
    new Gauge({
      name: 'bosun_ssh_pool_connections',
      help: 'SSH connections held open in the worker pool (one per server in use)',
      registers: [this.registry],
      collect() {
        this.set([...pools].reduce((sum, pool) => sum + pool.size, 0));
      },
    });
    new Gauge({
      name: 'bosun_ssh_pool_idle_connections',
      help: 'Of those, the connections nothing runs on (closed after SSH_POOL_IDLE_SECONDS, or after 10 s beyond SSH_POOL_MAX)',
      registers: [this.registry],
      collect() {
        this.set([...pools].reduce((sum, pool) => sum + pool.idle, 0));
      },
    });
    new Gauge({
      name: 'bosun_socketio_connected_clients',
      help: 'Authenticated Socket.IO clients connected to this API process',
      registers: [this.registry],
      collect() {
        this.set([...sockets].reduce((sum, count) => sum + count(), 0));
      },
    });
    collectDefaultMetrics({ register: this.registry });
    // Every label value is exported from the start, so a rate() over one that never happened reads 0, not nothing.
    for (const kind of ['transport', 'timeout', 'authentication', 'host_key_mismatch', 'key_invalid'] satisfies SshErrorKind[]) {
      this.sshConnectionFailures.inc({ kind }, 0);
    }
    for (const status of FINAL_RUN_STATUSES) this.runsFinished.inc({ status }, 0);
    for (const status of FINAL_CONVERSATION_STATUSES) this.conversationsFinished.inc({ status }, 0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  trackSshPool(pool: SshPoolCounts): void {
    this.sshPools.add(pool);
  }

  /** Counts a Socket.IO server's clients until the returned function is called. */
  trackSocketClients(count: () => number): () => void {
    this.socketCounters.add(count);
    return () => this.socketCounters.delete(count);
  }

  sshConnectionFailed(kind: SshErrorKind): void {
    this.sshConnectionFailures.inc({ kind });
  }

  /** The Prometheus text: Bosun's metrics, then the Temporal SDK's (or a comment saying why they are missing). */
  async exposition(): Promise<string> {
    const own = await this.registry.metrics();
    const url = this.options.temporalSdkMetricsUrl;
    if (!url) return own;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return `${own}\n${await response.text()}`;
    } catch (error) {
      return `${own}\n# Temporal SDK metrics unavailable from ${url}: ${(error as Error).message}\n`;
    }
  }
}
