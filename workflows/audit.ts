import { continueAsNew, proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { AuditActivities } from '../activities/audit';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';

/** The chainer: long, heartbeating; retried without end (the trail must keep moving). */
const chaining = proxyActivities<AuditActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', backoffCoefficient: 2 },
});

const checkpointing = proxyActivities<AuditActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

/** Rounds before the history is started afresh. */
const ROUNDS = 100;

/**
 * The audit trail's one chainer (workflow id `<task queue>-audit-chain`): it runs the chaining
 * activity again and again, so exactly one moves outbox entries into the chain at a time.
 */
export async function auditChainWorkflow(): Promise<void> {
  for (let round = 0; round < ROUNDS; round += 1) {
    const chained = await chaining.chainAuditEntries();
    setCurrentDetails(`round ${round + 1}: ${chained} entries chained`);
  }
  await continueAsNew<typeof auditChainWorkflow>();
}

/** Every AUDIT_CHECKPOINT_MINUTES: each organization's head recorded and published; entries past retention pruned. */
export async function auditCheckpointWorkflow(): Promise<void> {
  for (let round = 0; round < ROUNDS; round += 1) {
    const { nextInSeconds } = await checkpointing.checkpointAuditTrail();
    setCurrentDetails(`checkpoint ${round + 1} recorded; next in ${nextInSeconds} s`);
    await sleep(nextInSeconds * 1000);
  }
  await continueAsNew<typeof auditCheckpointWorkflow>();
}
