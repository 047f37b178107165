import { DEFAULT_HEARTBEAT_TIMEOUT_SECONDS } from '../src/domain/contracts/heartbeats';

// Defined by the bundler to the worker's WORKER_HEARTBEAT_TIMEOUT_SECONDS (src/domain/contracts/heartbeats.ts).
declare const __BOSUN_HEARTBEAT_TIMEOUT_MS__: number | undefined;

/** How long a heartbeating activity of a worker that died silently stands still before another worker takes it. */
export const HEARTBEAT_TIMEOUT_MS: number =
  typeof __BOSUN_HEARTBEAT_TIMEOUT_MS__ === 'number' ? __BOSUN_HEARTBEAT_TIMEOUT_MS__ : DEFAULT_HEARTBEAT_TIMEOUT_SECONDS * 1000;
