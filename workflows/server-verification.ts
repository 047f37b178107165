import {
  ActivityFailure,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import type { ServerActivities } from '../activities/servers';
import { serverHealthWorkflowId } from '../src/domain/contracts/workflow-ids';
import { serverSearchAttributes } from '../src/domain/contracts/search-attributes';
import { type VerifyServerInput } from '../src/domain/contracts/servers';
import { failure, NON_RETRYABLE_FAILURES } from '../src/domain/contracts/failure-types';
import { serverHealthWorkflow } from './server-health';
import { isPatched, PATCHES } from './patches';

const { recordVerificationFailure, watchServerHealth } = proxyActivities<ServerActivities>({
  startToCloseTimeout: '30 seconds',
});

/** Connects to a newly added (or re-verified) server, pins its host key, records its fingerprint, then keeps watching it. */
export async function serverVerificationWorkflow(input: VerifyServerInput): Promise<void> {
  const { verifyServer } = proxyActivities<ServerActivities>({
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: input.maxAttempts,
      nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
    },
  });

  try {
    await verifyServer({ serverId: input.serverId, trustNewHostKey: input.trustNewHostKey });
  } catch (error) {
    if (isCancellation(error)) throw error;
    const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
    const message = cause instanceof Error ? cause.message : String(cause);
    await recordVerificationFailure({ serverId: input.serverId, message });
    throw failure('VerificationFailed', `Verification failed: ${message}`, { cause: error as Error });
  }

  if (isPatched(PATCHES.healthSweeps)) {
    // Watched by its organization's health sweep from now on (started if none runs).
    await watchServerHealth({ organizationId: input.organizationId });
    return;
  }
  try {
    await startChild(serverHealthWorkflow, {
      workflowId: serverHealthWorkflowId(input.serverId),
      args: [{ serverId: input.serverId, organizationId: input.organizationId, intervalSeconds: input.healthIntervalSeconds }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: serverSearchAttributes(input.organizationId, input.serverId),
      staticSummary: `Watch the health of ${input.serverLabel ?? input.serverId}`,
    });
  } catch (error) {
    // Re-verifying a server that is already being watched: the running monitor carries on.
    if ((error as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw error;
  }
}
