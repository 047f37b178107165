import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';
import { wakeQueuedRuns } from './reconcile';

/** Every worker sweeps for runs whose wake was lost (the API could not reach Temporal after answering). */
export function startQueueSweeper(workflows: WorkflowGateway, log: Logger, everyMs = 10_000): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    wakeQueuedRuns(workflows, { stalledForMs: everyMs })
      .then((woken) => woken && log.info({ woken }, 'woke run queues whose wake was lost'))
      .catch((err) => log.warn({ err }, 'could not sweep the run queues'))
      .finally(() => {
        sweeping = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
