import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';
import { startQueuedFleetRuns, wakeQueuedRuns } from './reconcile';

/** Every worker sweeps for queued runs whose start or wake was lost (the API could not reach Temporal after answering). */
export function startQueueSweeper(workflows: WorkflowGateway, log: Logger, everyMs = 10_000): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    Promise.all([wakeQueuedRuns(workflows, { stalledForMs: everyMs }), startQueuedFleetRuns(workflows, { stalledForMs: everyMs })])
      .then(([woken, started]) => (woken || started) && log.info({ woken, started }, 'woke run queues, and started fleet runs, whose wake was lost'))
      .catch((err) => log.warn({ err }, 'could not sweep the run queues'))
      .finally(() => {
        sweeping = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
