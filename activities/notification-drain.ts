import type { Context } from '@temporalio/activity';
import type { DeliveryRef } from '../src/domain/contracts/notifications';
import type { WorkflowSignatures } from '../src/domain/contracts/signatures';
import { DELIVER_SIGNAL, notificationDeliveryWorkflowId } from '../src/domain/contracts/workflow-ids';
import * as deliveries from '../src/domain/notifications/deliveries';
import { markQueued, recordFirstAttempts, unqueuedDeliveries } from '../src/domain/notifications/delivery-queue';
import { inLanes } from '../src/domain/lanes';
import { activityClientCall } from './client-calls';
import { connectionPools, firstAttempts, type FirstAttemptDeps, type HandOver, type Policy } from './notification-first-attempts';

/** Events, and deliveries, taken at a time. */
const BATCH = 200;
/** Subjects whose deliveries are handed to their workflows at a time. */
const PARALLEL = 16;

/** Each delivery signalled to its subject's workflow (started if need be): subjects in parallel, one subject's in order. */
async function handToWorkflows(context: Context, handOver: HandOver[], { retryInitialMs, maxAttempts }: Policy): Promise<void> {
  const bySubject = new Map<string, HandOver[]>();
  for (const ref of handOver) {
    const workflowId = notificationDeliveryWorkflowId(ref.channelId, ref.subject);
    bySubject.set(workflowId, [...(bySubject.get(workflowId) ?? []), ref]);
  }
  await inLanes([...bySubject], PARALLEL, async ([workflowId, refs]) => {
    for (const ref of refs) {
      await activityClientCall(context, () =>
        context.client.workflow.signalWithStart<WorkflowSignatures['notificationDeliveryWorkflow'], [DeliveryRef]>('notificationDeliveryWorkflow', {
          workflowId,
          taskQueue: context.info.taskQueue,
          args: [{ channelId: ref.channelId, subject: ref.subject, maxAttempts, ...(retryInitialMs ? { retryInitialMs } : {}) }],
          signal: DELIVER_SIGNAL,
          signalArgs: [{ deliveryId: ref.deliveryId, round: ref.round, ...(ref.attemptsMade ? { attemptsMade: ref.attemptsMade } : {}) }],
          staticSummary: `Notifications of ${ref.subject.kind} ${ref.subject.id} to channel ${ref.channelId}, in order`,
        }),
      );
      context.heartbeat();
    }
  });
}

/**
 * Every undispatched event given its deliveries (a batch of events in one transaction), then every
 * delivery not yet handed on: a fresh one whose subject waits for nothing attempted here
 * (notification-first-attempts.ts), the batch's results recorded in one write; the rest — refused
 * first attempts, what waits behind them, redeliveries — signalled to their subjects' workflows, and
 * only then marked as handed on (a crash in between signals them again; the workflow ignores a
 * repeat). An event's deliveries all exist before any of them is sent.
 */
export async function drainOnce(context: Context, deps: FirstAttemptDeps, policy: Policy): Promise<number> {
  let handled = 0;
  for (;;) {
    const events = await deliveries.undispatchedEvents(BATCH);
    await deliveries.dispatchEvents(events, policy.maxAttempts);
    context.heartbeat();
    handled += events.length;
    if (events.length < BATCH) break;
  }
  // Kept alive across the batches of one pass (back to back), closed before the drain idles.
  const pools = connectionPools();
  try {
    for (;;) {
      const queued = await unqueuedDeliveries(BATCH);
      const { results, handOver, disable } = await firstAttempts(context, deps, queued, policy, pools);
      await recordFirstAttempts(results);
      await disable();
      await handToWorkflows(context, handOver, policy);
      await markQueued(handOver);
      context.heartbeat();
      handled += queued.length;
      if (queued.length < BATCH) break;
    }
  } finally {
    pools.close();
  }
  return handled;
}
