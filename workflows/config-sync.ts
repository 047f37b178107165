import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { proxyActivities, setCurrentDetails, startChild, workflowInfo } from '@temporalio/workflow';
import type { ConfigSyncActivities } from '../activities/config-sync';
import type { ConfigSyncInput, ConfigSyncOutcome } from '../src/domain/contracts/config-sync';
import { configSyncWorkflowId } from '../src/domain/contracts/workflow-ids';
import { NON_RETRYABLE_FAILURES } from '../src/domain/contracts/failure-types';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';

/** Fetch, plan and apply: retried while the repository or Bosun cannot answer, never for what a retry cannot fix. */
const syncing = proxyActivities<ConfigSyncActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

/**
 * A config source's sync (issue 38): one activity fetches the repository, plans it and applies a
 * clean plan in one transaction, so a crash mid-sync redoes it, never half. One runs at a time per
 * source (`config-sync-<id>`): a tick of the source's Temporal Schedule starts that one as its child,
 * or finds it running and leaves it.
 */
export async function configSyncWorkflow(input: ConfigSyncInput): Promise<ConfigSyncOutcome> {
  if (input.tick) {
    try {
      const sync = await startChild(configSyncWorkflow, {
        workflowId: configSyncWorkflowId(input.sourceId),
        args: [{ sourceId: input.sourceId, organizationId: input.organizationId }],
        staticSummary: `config source ${input.sourceId}: sync (its schedule's tick ${workflowInfo().workflowId})`,
      });
      setCurrentDetails(`tick: sync ${sync.workflowId} started`);
      return await sync.result();
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      setCurrentDetails('tick: a sync of this source is running already; it is the one');
      return { outcome: 'already_running' };
    }
  }
  setCurrentDetails(`fetching, planning and applying${input.requestedBy ? ` (asked by ${input.requestedBy})` : ''}`);
  const outcome = await syncing.syncConfigSource({ sourceId: input.sourceId });
  setCurrentDetails(outcome.outcome === 'applied' || outcome.outcome === 'unchanged' ? `${outcome.outcome} ${outcome.revision}` : outcome.outcome);
  return outcome;
}
