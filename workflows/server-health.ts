import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ServerActivities } from '../activities/servers';
import type { ServerHealthInput } from '../src/domain/contracts/servers';

// Each check adds about a dozen history events; start afresh long before Temporal's limits.
const CHECKS_PER_RUN = 200;

const { checkServerHealth } = proxyActivities<ServerActivities>({
  startToCloseTimeout: '1 minute',
  // An unreachable server is an answer (offline), not a failure; retries only cover the worker's own trouble.
  retry: { maximumAttempts: 3 },
});

/** Checks a verified server every interval: unreachable → offline, reachable again → verified. Ends when the server is deleted. */
export async function serverHealthWorkflow(input: ServerHealthInput): Promise<void> {
  let intervalSeconds = input.intervalSeconds;
  for (let check = 0; check < CHECKS_PER_RUN; check += 1) {
    await sleep(intervalSeconds * 1000);
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
