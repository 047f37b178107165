import { continueAsNew, defineSignal, proxyActivities, setCurrentDetails, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { ServerActivities } from '../activities/servers';
import type { ServerHealthSweepInput } from '../src/domain/contracts/servers';
import { SERVERS_TO_WATCH_SIGNAL } from '../src/domain/contracts/workflow-ids';

/** "There are servers to watch": a verification's, or a worker's start (signal-with-start: it starts the sweep if none runs). */
export const serversToWatchSignal = defineSignal(SERVERS_TO_WATCH_SIGNAL);

/** About a dozen history events a sweep: continue as new after 20, a few hundred events to replay if the worker's cache evicted it. */
const SWEEPS_PER_RUN = 20;

const { checkServersHealth } = proxyActivities<ServerActivities>({
  // Its checks are spread over half the interval, each bounded by the connect timeout; heartbeats say it is alive.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  // An unreachable server is an answer (offline), not a failure; retries only cover the worker's own trouble.
  retry: { maximumAttempts: 3 },
});

/**
 * Watches an organization's servers: every interval one activity checks each verified or offline
 * server (unreachable → offline, reachable again → verified, another host key → unverified). One
 * workflow for the organization's whole fleet, where there was one per server: a thousand servers'
 * checks were a thousand workflows' timers, activities and replays a minute. Ends when the
 * organization has no server left to watch; a server verified later starts it again.
 */
export async function serverHealthSweepWorkflow(input: ServerHealthSweepInput): Promise<void> {
  let intervalSeconds = input.intervalSeconds;
  let toWatch = false;
  setHandler(serversToWatchSignal, () => {
    toWatch = true;
  });
  let sweptMs = 0;
  for (let sweep = 0; sweep < SWEEPS_PER_RUN; sweep += 1) {
    // Sweeps start an interval apart, so each server is checked once an interval (a sweep longer than that: a tenth of one after it).
    await sleep(Math.max(intervalSeconds * 1000 - sweptMs, intervalSeconds * 100));
    // A server verified while this sweep runs may be missed by its read: its signal keeps the sweep going.
    toWatch = false;
    const startedAt = Date.now();
    try {
      const result = await checkServersHealth({ organizationId: input.organizationId, intervalSeconds });
      sweptMs = Date.now() - startedAt;
      intervalSeconds = result.intervalSeconds;
      if (result.checked === 0 && !toWatch) {
        setCurrentDetails('no server to watch: ended until a server is verified');
        return;
      }
      setCurrentDetails(`${result.checked} servers checked: ${result.verified} verified, ${result.offline} offline; next sweep in ${intervalSeconds} s`);
    } catch {
      // The sweep itself broke (worker or database trouble), not the servers: try again next interval.
    }
    if (workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof serverHealthSweepWorkflow>({ ...input, intervalSeconds });
}
