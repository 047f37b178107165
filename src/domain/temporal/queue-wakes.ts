import type { Client } from '@temporalio/client';
import type { QueueWake } from '../contracts/runs';
import { serverSearchAttributes } from '../contracts/search-attributes';
import type { WorkflowSignatures } from '../contracts/signatures';
import { serverRunQueueWorkflowId, WAKE_QUEUE_SIGNAL } from '../contracts/workflow-ids';
import type { Reachability } from './reachability';

/**
 * Wakes of servers' run queues, coalesced: concurrent wakes of one server share their signal (at
 * most one in flight and one waiting per server, the waiting one naming every run that asked),
 * instead of one signal per run applied one at a time to the same workflow.
 */
export class QueueWakes {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, { runIds: Set<string>; sent: Promise<void> }>();

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly reachability: Reachability,
  ) {}

  /**
   * Wakes a server's run queue (starting it if idle) for a run waiting for its turn there, so it
   * reads the runs committed before this call.
   */
  wake(serverId: string, organizationId: string, runId: string): Promise<void> {
    const waiting = this.waiting.get(serverId);
    if (waiting) {
      waiting.runIds.add(runId);
      return waiting.sent;
    }
    const runIds = new Set([runId]);
    const inFlight = this.inFlight.get(serverId);
    const send = async () => {
      this.waiting.delete(serverId);
      const signal: Promise<unknown> = this.reachability.noting(
        this.client.workflow.signalWithStart<WorkflowSignatures['serverRunQueueWorkflow'], [QueueWake]>('serverRunQueueWorkflow', {
          taskQueue: this.taskQueue,
          workflowId: serverRunQueueWorkflowId(serverId),
          args: [{ serverId, organizationId }],
          signal: WAKE_QUEUE_SIGNAL,
          signalArgs: [{ runIds: [...runIds] }],
          typedSearchAttributes: serverSearchAttributes(organizationId, serverId),
          staticSummary: `Deployment runs of server ${serverId}, one at a time`,
        }),
      );
      // Only for ordering the next wake after this one: its failure is the caller's (awaited below), never unhandled here.
      const pending = signal.then(
        () => undefined,
        () => undefined,
      );
      this.inFlight.set(serverId, pending);
      try {
        await signal;
      } finally {
        if (this.inFlight.get(serverId) === pending) this.inFlight.delete(serverId);
      }
    };
    // A wake already on its way may have been read before our run was committed: send another after it.
    const sent = inFlight ? inFlight.then(send) : send();
    if (inFlight) this.waiting.set(serverId, { runIds, sent });
    return sent;
  }
}
