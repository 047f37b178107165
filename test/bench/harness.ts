import { loadConfig } from '../../src/config';
import { applyMemorySettings } from '../../src/heap-growth';
import { startBosun, type Bosun, type BosunOptions } from '../support/bosun';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';

/**
 * Runs a bench on the test run's real services (mongod, Temporal dev server, sshd) with one Bosun
 * in this process, measured without the tests' debug log; exits 0, or 1 with the error. The Bosun
 * keeps production's worker timeouts (heartbeat, sticky queue, shutdown grace), not the shorter ones
 * the tests' Bosuns use to get over killed workers quickly: a saturated worker is measured as users
 * run it.
 */
export function runBench(options: BosunOptions, body: (bosun: Bosun) => Promise<void>): void {
  process.env.TEST_LOG_LEVEL ??= 'silent';
  const defaults = loadConfig({ HEAP_GROWTH_PERCENT: process.env.HEAP_GROWTH_PERCENT, HEAP_RETURN_AFTER_BURSTS: process.env.HEAP_RETURN_AFTER_BURSTS });
  // The heap's bound and its return after a burst, as `npm start` sets them (or their defaults), hold for the Bosun in this process too.
  applyMemorySettings(defaults.memory);
  const production = {
    WORKER_HEARTBEAT_TIMEOUT_SECONDS: String(defaults.worker.heartbeatTimeoutSeconds),
    WORKER_STICKY_TIMEOUT_SECONDS: String(defaults.worker.stickyTimeoutSeconds),
    WORKER_SHUTDOWN_GRACE_SECONDS: String(defaults.worker.shutdownGraceSeconds),
  };
  const run = async () => {
    await globalSetup();
    // The pool's bound as the operator sets it (a fleet-sized one, say), as `npm start` would read it (BENCH_PROCESS=1 passes the whole env).
    const pool: Record<string, string> = process.env.SSH_POOL_MAX ? { SSH_POOL_MAX: process.env.SSH_POOL_MAX } : {};
    const bosun = await startBosun({ ...options, env: { ...production, ...pool, ...options.env } });
    try {
      await body(bosun);
    } finally {
      await bosun.stop();
      await globalTeardown();
    }
  };
  runMain(run);
}

/** Runs a bench's body to its end: exits 0, or 1 with the error. */
export function runMain(main: () => Promise<void>): void {
  void main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
