import { continueAsNew, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications';
import type { NotificationDispatchInput } from '../src/domain/contracts/notifications';
import { HEARTBEAT_TIMEOUT_MS } from './heartbeats';

/** How long one drain runs: it heartbeats, and a dead worker's is retried on another within the heartbeat timeout. */
const DRAIN_MS = 10 * 60_000;
/** Drains per run of this workflow before it continues as new (a few events each: its history stays small). */
const DRAINS_PER_RUN = 100;

const draining = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '1 hour',
  // A batch's writes and signals between two heartbeats: a few seconds more than the other activities.
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS + 5_000,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The notification dispatcher, one per Bosun (started by each worker, idempotently): drains the
 * outbox — each event's deliveries made, each delivery handed to its subject's workflow — in one
 * long heartbeating activity at a time, forever.
 */
export async function notificationDispatchWorkflow(input: NotificationDispatchInput): Promise<void> {
  const drainMs = input.drainMs ?? DRAIN_MS;
  for (let drain = 0; drain < DRAINS_PER_RUN; drain += 1) {
    setCurrentDetails(`draining the notification outbox (drain ${drain + 1} of ${DRAINS_PER_RUN} before continuing as new)`);
    await draining.drainNotifications({ drainMs });
  }
  await continueAsNew<typeof notificationDispatchWorkflow>(input);
}
