import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ServerActivities } from '../activities/servers';
import type { ServerHealthInput } from '../src/domain/contracts/servers';
import { isPatched, PATCHES } from './patches';

/**
 * Each check adds about a dozen history events. A run of 30 checks (about 360 events) keeps the replay
 * cheap when the worker's bounded cache (WORKER_WORKFLOW_CACHE) evicted the workflow between two checks,
 * as it does with more servers than the bound; histories recorded before held 200.
 */
const CHECKS_PER_RUN = 30;
const CHECKS_PER_RUN_BEFORE = 200;

const { checkServerHealth } = proxyActivities<ServerActivities>({
  startToCloseTimeout: '1 minute',
  // An unreachable server is an answer (offline), not a failure; retries only cover the worker's own trouble.
  retry: { maximumAttempts: 3 },
});

/**
 * Checks a verified server every interval: unreachable → offline, reachable again → verified. Ends when the server is deleted.
 * Replaced by the organization's sweep (server-health-sweep.ts, PATCHES.healthSweeps): a monitor started before it ends at its next check.
 */
export async function serverHealthWorkflow(input: ServerHealthInput): Promise<void> {
  let intervalSeconds = input.intervalSeconds;
  const checks = isPatched(PATCHES.shortHealthRuns) ? CHECKS_PER_RUN : CHECKS_PER_RUN_BEFORE;
  for (let check = 0; check < checks; check += 1) {
    await sleep(intervalSeconds * 1000);
    // Its organization's health sweep watches the server now (started at the worker's start): this monitor ends.
    if (isPatched(PATCHES.healthSweeps)) return;
    try {
      const result = await checkServerHealth({ serverId: input.serverId });
      if (result.outcome === 'gone') return;
      intervalSeconds = result.intervalSeconds;
    } catch {
      // The check itself broke (worker or database trouble), not the server: try again next interval.
    }
    if (workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof serverHealthWorkflow>({ ...input, intervalSeconds });
}
