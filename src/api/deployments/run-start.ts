import { triggeredByText } from '../../domain/access/actor';
import { unlessTemporalUnreachable } from '../http/errors';
import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import { withdrawQueuedRun } from '../../domain/deployments/runs';
import type { Deployment, DeploymentRun } from '../../domain/deployments/model';
import { SettledStarts } from './settled-starts';

/*
 * A queued run's start in Temporal: a fleet run's own workflow, or a one-server run's server queue
 * woken (wakes of one queue coalesce), which starts the run's workflow, its turn given, when its turn
 * comes. While Temporal answers, the start follows the trigger's answer (SettledStarts); while it is
 * in doubt, the start must succeed before the answer.
 */
export function runStarter({ workflows, log }: { workflows: WorkflowGateway; log: Logger }) {
  const settledStarts = new SettledStarts();

  const start = (organizationId: string, deployment: Deployment, run: DeploymentRun) =>
    unlessTemporalUnreachable('queue the run', () =>
      run.fleet
        ? workflows.runs.startFleet(
            { runId: run._id.toString(), organizationId, deploymentId: deployment._id.toString(), deploymentName: deployment.name, triggeredBy: triggeredByText(run) },
            run.fleet.total,
          )
        : workflows.queues.wake(String(run.server_id), organizationId, run._id.toString()),
    );

  return {
    start,

    /** A trigger is being handled; the function returned says it has been answered. */
    begin: () => settledStarts.begin(),

    /**
     * An accepted run's start. Temporal answering: sent once the triggers around it are answered (a
     * start that fails leaves it queued for the workers' sweep). Temporal in doubt: sent now, and the
     * run taken back if it fails, unless a concurrent start already began it.
     */
    async startAccepted(organizationId: string, deployment: Deployment, run: DeploymentRun): Promise<void> {
      if (workflows.reachability.looksReachable()) {
        settledStarts.defer(() => void start(organizationId, deployment, run).catch((err) => log.warn({ err, runId: run._id.toString() }, 'could not start the run; the workers will')));
        return;
      }
      try {
        await start(organizationId, deployment, run);
      } catch (error) {
        await withdrawQueuedRun(run._id);
        throw error;
      }
    },
  };
}
