/*
 * How long a heartbeating activity (a step's command, a transfer, the audit chainer, the
 * notification drain) may go without a heartbeat before Temporal gives it to another worker: how
 * long the work of a worker that died silently (SIGKILL, a crash, its machine gone) stands still.
 * The worker's WORKER_HEARTBEAT_TIMEOUT_SECONDS is written into its bundle of the workflows when it
 * is built (cachedWorkflowBundle): a constant, so the workflows stay deterministic (a replay compares
 * no timeout). Every such activity heartbeats at least every 2 s.
 */

/** Where no setting is written in (a bundle made without one). */
export const DEFAULT_HEARTBEAT_TIMEOUT_SECONDS = 15;

/** The name the bundler defines to the setting, in milliseconds. */
export const HEARTBEAT_TIMEOUT_DEFINE = '__BOSUN_HEARTBEAT_TIMEOUT_MS__';
