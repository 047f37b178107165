import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel, type WorkerOptions } from '@temporalio/worker';
import { activitySources, mergeActivities, type ActivityDeps, type ActivitySource } from '../../activities';
import type { Logger } from '../logger';
import type { TemporalSecurity } from '../config';
import { connectionOptions } from '../domain/temporal/connection';
import { cachedWorkflowBundle } from './workflow-bundle';

export { cachedWorkflowBundle };

let runtimeInstalled = false;

/** This process's own task queues, where long steps are followed after their hand-off: activities only, by design. */
const handoffTaskQueues = new Set<string>();

/**
 * The SDK warns "No workflows registered" for any worker that polls no workflows, and has no option
 * to say that is meant (a per-process queue is worker-specific on purpose; polling workflows there
 * would cost a workflow thread and a sticky queue for nothing). That one message of the hand-off
 * workers is logged at debug; every other warning, of theirs too, stays a warning.
 */
function expected(message: string, meta: Record<string, unknown> | undefined): boolean {
  return message.startsWith('No workflows registered') && typeof meta?.taskQueue === 'string' && handoffTaskQueues.has(meta.taskQueue);
}

/**
 * Routes the Temporal SDK's own logs (workers, activities) into Bosun's logger and, given
 * `metricsAddress` (host:port), serves the SDK's Prometheus metrics there. Once per process, before
 * any worker or native connection exists: later calls (tests start several workers in one process)
 * change nothing and return false.
 */
export function installTemporalRuntime(log: Logger, metricsAddress?: string): boolean {
  if (runtimeInstalled) return false;
  runtimeInstalled = true;
  const sdkLog = log.child({ component: 'temporal-sdk' });
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error',
  };
  // The SDK logs down to Bosun's own level (LOG_LEVEL), no further.
  const sdkLevel = (Object.keys(levels) as LogLevel[]).find((level) => levels[level] === log.level) ?? 'ERROR';
  Runtime.install({
    // Bosun's main stops things in order (HTTP, worker, services); the SDK must not act on signals itself.
    shutdownSignals: [],
    logger: new DefaultLogger(sdkLevel, ({ level, message, meta }) => sdkLog[expected(message, meta) ? 'debug' : levels[level]](meta ?? {}, message)),
    telemetryOptions: {
      // Core's (Rust) own warnings go through the same logger rather than to the console as text.
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress } } } : {}),
    },
  });
  return true;
}

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  cacheDir: string;
  /** Where the Temporal SDK serves its Prometheus metrics (host:port); unset, it exports none. */
  sdkMetricsAddress?: string;
  security?: TemporalSecurity;
  /** How many steps this worker runs at once (WORKER_MAX_CONCURRENT_STEPS). */
  maxConcurrentSteps: number;
  /**
   * WORKER_STICKY_TIMEOUT_SECONDS (10, the SDK's default unless given): a workflow's next task goes to
   * the worker that holds it in its cache, and to any worker once it has waited this long there. It is
   * how long the runs of a worker killed outright (SIGKILL, a crash, its machine gone) stand still.
   */
  stickyTimeoutSeconds?: number;
  /**
   * WORKER_HEARTBEAT_TIMEOUT_SECONDS (15 unless given): how long a step, transfer or other heartbeating
   * activity of a worker that died silently stands still before another worker takes it over.
   */
  heartbeatTimeoutSeconds?: number;
  /** WORKER_SHUTDOWN_GRACE_SECONDS (10 unless given): how long a stopping worker lets its activities finish before it hands them back. */
  shutdownGraceSeconds?: number;
  /**
   * WORKER_WORKFLOW_CACHE (250 unless given): how many workflows stay in memory between their tasks,
   * least recently used evicted first; an evicted one replays its history on its next task.
   */
  workflowCache?: number;
  /**
   * Tests only: false leaves this worker's own task queue unpolled (as when its follower is stuck),
   * so a handed-off step waits for a follower that does not come.
   */
  followHandoffs?: boolean;
}

/** The SDK's default (min(10, slots)): each workflow-task poll holds a workflow-task slot while it waits. */
const MAX_WORKFLOW_TASK_POLLS = 10;
/** The SDK's default, for the other activities (conversations' planning and steps, transfers, health checks, reruns of lost steps). */
const SHARED_ACTIVITY_SLOTS = 100;

/**
 * The worker's slots, from how many steps it may run at once (WORKER_MAX_CONCURRENT_STEPS). A quick
 * step is a local activity, and its run's workflow task stays open while it runs: a running step holds
 * a local-activity slot and a workflow-task slot. The local-activity slots are the limit: `steps` at
 * most (a run's bookkeeping, local activities of milliseconds, shares them). The workflow-task slots
 * are `steps` plus one per poll, so that `steps` is reached: a waiting poll holds a slot (core keeps a
 * sticky poll waiting at all times), and with only `steps` slots that poll and the fleet's own tasks
 * took steps' places (a limit of 2 ran one step at a time). A target that gets a spare slot waits in it
 * for a local-activity slot. A long step, handed off after STEP_HANDOFF_AFTER_MS, frees both (see
 * FOLLOWED_COMMANDS). A fleet batch's target groups (up to 40 targets sharing a workflow, its task
 * open while any of their steps runs) arrive together as new workflows, on the shared (non-sticky)
 * queue: it gets half the polls (the SDK's default, a fifth).
 */
export function workerConcurrency(steps: number, workflowCache = DEFAULT_WORKFLOW_CACHE) {
  const polls = Math.min(MAX_WORKFLOW_TASK_POLLS, steps);
  const workflowTasks = steps + polls;
  return {
    tuner: {
      localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: steps },
      workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: workflowTasks },
      activityTaskSlotSupplier: { type: 'fixed-size', numSlots: SHARED_ACTIVITY_SLOTS },
      // Bosun has no Nexus operations.
      nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
    },
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: polls },
    nonStickyToStickyPollRatio: 0.5,
    // Core never holds more workflow tasks than it caches workflows: the cache is at least the slots.
    maxCachedWorkflows: Math.max(workflowTasks, workflowCache),
  } satisfies Partial<WorkerOptions>;
}

/**
 * The SDK's own default is sized by the heap (about 600 workflows per GiB: 2,310 on a 4 GiB heap), so a
 * thousand servers' health workflows and a thousand-target run's stayed in memory together.
 */
const DEFAULT_WORKFLOW_CACHE = 250;

/**
 * Handed-off commands this worker can follow at once: never the limit. Each is a promise and an SSH
 * channel; a follow kept waiting for a slot past its 15 s scheduleToStart is taken for a dead worker's,
 * and its command runs again (with the SDK's default of 100 slots, a 101st long step at once would).
 */
const FOLLOWED_COMMANDS = 100_000;

export interface BosunWorker {
  run(): Promise<void>;
  /** Stops both workers (a no-op for one already stopping). */
  shutdown(): void;
}

/**
 * The worker: workflows and activities on the shared task queue, plus this process's own task queue
 * where long steps' commands, started here, are followed to the end (they live on this process's SSH
 * channels). Stopping one stops both.
 */
export async function createWorker(settings: WorkerSettings, deps: Omit<ActivityDeps, 'handoffTaskQueue'>, extraSources: ActivitySource[] = []) {
  const handoffTaskQueue = `${settings.taskQueue}-worker-${os.hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  handoffTaskQueues.add(handoffTaskQueue);
  // Refused before anything connects: two files registering one activity name (DuplicateActivityError).
  const activities = mergeActivities([...activitySources({ ...deps, handoffTaskQueue }), ...extraSources]);
  installTemporalRuntime(deps.log, settings.sdkMetricsAddress);
  const connection = await NativeConnection.connect({ address: settings.address, ...connectionOptions(settings.security) });
  // Heartbeats carry cancellation back to a running step: at most a second late, not 80% of the heartbeat timeout.
  const heartbeats = { maxHeartbeatThrottleInterval: '1 second', defaultHeartbeatThrottleInterval: '1 second' } as const;
  const shared = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    workflowBundle: await cachedWorkflowBundle(settings.cacheDir, deps.log, { heartbeatTimeoutSeconds: settings.heartbeatTimeoutSeconds }),
    activities,
    shutdownGraceTime: `${settings.shutdownGraceSeconds ?? 10} seconds`,
    stickyQueueScheduleToStartTimeout: `${settings.stickyTimeoutSeconds ?? 10} seconds`,
    ...workerConcurrency(settings.maxConcurrentSteps, settings.workflowCache),
    ...heartbeats,
  });
  const own = settings.followHandoffs === false ? null : await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: handoffTaskQueue,
    activities: { awaitStep: activities.awaitStep },
    maxConcurrentActivityTaskExecutions: FOLLOWED_COMMANDS,
    shutdownGraceTime: `${settings.shutdownGraceSeconds ?? 10} seconds`,
    ...heartbeats,
  });
  const worker: BosunWorker = {
    async run() {
      const runs = [shared.run(), ...(own ? [own.run()] : [])];
      // One stopping (a fatal error) stops the other; the first failure is reported.
      runs.forEach((running) => running.then(
        () => worker.shutdown(),
        () => worker.shutdown(),
      ));
      await Promise.all(runs);
    },
    shutdown() {
      for (const w of [shared, own]) if (w?.getState() === 'RUNNING') w.shutdown();
    },
  };
  return { worker, connection };
}
