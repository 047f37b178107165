import type { WorkflowGateway } from '../domain/temporal/client';
import type { Logger } from '../logger';
import { periodically } from './periodic';
import { startQueuedFleetRuns, wakeQueuedRuns } from './reconcile';
import { startQueuedPipelineRuns } from './pipeline-reconcile';

/** Every worker sweeps for queued runs whose start or wake was lost (the API could not reach Temporal after answering). */
export function startQueueSweeper(workflows: WorkflowGateway, log: Logger, everyMs = 10_000): () => Promise<void> {
  return periodically(
    everyMs,
    async () => {
      const [woken, started, pipelines] = await Promise.all([
        wakeQueuedRuns(workflows, { stalledForMs: everyMs }),
        startQueuedFleetRuns(workflows, { stalledForMs: everyMs }),
        startQueuedPipelineRuns(workflows, { stalledForMs: everyMs }),
      ]);
      if (woken || started || pipelines) log.info({ woken, started, pipelines }, 'woke run queues, and started fleet and pipeline runs, whose wake was lost');
    },
    (err) => log.warn({ err }, 'could not sweep the run queues'),
    { now: false },
  );
}
