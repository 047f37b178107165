import { failure } from '../src/domain/contracts/failure-types';

/*
 * A worker's long activities (the audit chainer, the notification drain) run for minutes; the SDK
 * cancels them only after the shutdown's grace time. They watch the worker's own stopping signal
 * instead, so a stopping Bosun hands their work back at once to another worker.
 */

/** `wait`, or less: until `stopping` is aborted. */
export function untilStopping(stopping: AbortSignal | undefined, wait: Promise<unknown>): Promise<unknown> {
  if (!stopping) return wait;
  if (stopping.aborted) return Promise.resolve();
  let stopped: () => void = () => undefined;
  const aborted = new Promise<void>((resolve) => (stopped = resolve));
  stopping.addEventListener('abort', stopped, { once: true });
  // The listener goes with the wait: a long activity waits every second, for minutes.
  return Promise.race([wait, aborted]).finally(() => stopping.removeEventListener('abort', stopped));
}

/** Thrown by a long activity whose worker is stopping: retried, by another worker. */
export function throwIfStopping(stopping: AbortSignal | undefined, work: string): void {
  if (stopping?.aborted) throw failure('WorkerShutdown', `This worker is stopping: another ${work}`);
}
