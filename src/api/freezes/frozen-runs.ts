import { DeploymentRunModel } from '../../domain/deployments/model';
import type { RunWorkflows } from '../../domain/temporal/run-workflows';
import type { Logger } from '../../logger';

/** What telling frozen runs needs: the workflows' signal, and a log for a signal that could not be sent. */
export interface FrozenRunsDeps {
  workflows: Pick<RunWorkflows, 'freezesChanged'>;
  log: Logger;
}

/**
 * The organization's frozen runs check their freezes again at once (a freeze changed, applied or
 * deleted may have lifted). Their timers re-check within minutes anyway: a signal lost changes only how soon.
 */
export async function wakeOrganizationFrozenRuns({ workflows, log }: FrozenRunsDeps, organizationId: string): Promise<void> {
  const frozen = await DeploymentRunModel.find({ organization_id: organizationId, status: 'frozen', parent_run_id: null }, { _id: 1 }).lean();
  await Promise.all(
    frozen.map((run) => workflows.freezesChanged(run._id.toString()).catch((err: unknown) => log.warn({ err, runId: run._id.toString() }, 'could not tell a frozen run its freezes changed; its timer will'))),
  );
}
