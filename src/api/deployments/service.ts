import type { Logger } from '../../logger';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { DEFAULT_MAX_ACTIVE_RUNS, triggerAdmission } from './admission';
import { deploymentDefinitions, deploymentFinder } from './definitions';
import { runTriggers } from './trigger';
import { deploymentPlanner } from './plan';
import { createRunReads } from './run-reads';
import { runCanceller } from './cancel';
import { runGuards } from './guards';
import { runFeed } from './run-feed';

/**
 * What the deployment routes call, composed from one file per seam: definitions, triggers and
 * retries, plans, reads of runs (which the live subscription's snapshot shares), cancels. One
 * admission per service: its lookups are shared by the requests of the same moment.
 */
export function createDeploymentService({
  workflows,
  log,
  secretBox,
  maxActiveRuns = DEFAULT_MAX_ACTIVE_RUNS,
}: {
  workflows: WorkflowGateway;
  log: Logger;
  secretBox: SecretBox;
  /** Runs an organization may have queued or running at once; a trigger beyond it is refused (429). */
  maxActiveRuns?: number;
}) {
  const admission = triggerAdmission(maxActiveRuns);
  const findDeployment = deploymentFinder(admission.deploymentsById);
  const runs = createRunReads({ links: workflows.links, findDeployment });
  const { listRuns, getRun, getTarget, stepLogOf, runUiUrl, runOf } = runs;
  return {
    findDeployment,
    ...deploymentDefinitions(findDeployment, (ids) => Promise.all(ids.map((id) => workflows.schedules.remove(id))).then(() => undefined)),
    ...runTriggers({ workflows, log, secretBox, maxActiveRuns, admission, findDeployment, findRun: runs.findRun }),
    plan: deploymentPlanner(findDeployment),
    listRuns,
    getRun,
    getTarget,
    stepLogOf,
    runUiUrl,
    runOf,
    cancelRun: runCanceller({ workflows: workflows.runs, runs, log }),
    ...runGuards({ workflows: workflows.runs, runs }),
    ...runFeed({ links: workflows.links }),
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
