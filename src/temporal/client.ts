import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import {
  CANCEL_RUN_SIGNAL,
  ENQUEUE_RUN_SIGNAL,
  serverRunQueueWorkflowId,
  type QueuedRun,
  serverHealthWorkflowId,
  serverSearchAttributes,
  serverVerifyWorkflowId,
  type ServerHealthInput,
  type VerifyServerInput,
} from '../../workflows/contracts';
import type { serverHealthWorkflow } from '../../workflows/server-health';
import type { serverRunQueueWorkflow } from '../../workflows/server-run-queue';
import type { serverVerificationWorkflow } from '../../workflows/server-verification';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

/** Connects, waiting up to waitMs for a Temporal that is still starting (containers start in any order). */
export async function connectTemporal(settings: TemporalSettings, waitMs = 0): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address: settings.address });
      return new Client({ connection, namespace: settings.namespace });
    } catch (error) {
      if (Date.now() >= deadline) {
        throw Object.assign(new Error(`Temporal at ${settings.address} is unreachable: ${(error as Error).message}`), { cause: error });
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export interface ServerRef {
  id: string;
  organizationId: string;
  title: string;
  host: string;
}

/** The only way HTTP code reaches Temporal: business ids, search attributes and conflict policies live here. */
export class WorkflowGateway {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly serverSettings: { verifyMaxAttempts: number; healthIntervalSeconds: number },
  ) {}

  /**
   * Starts verification now. A verification already running is replaced: it may be about to finish
   * with a result older than the request (and without its trust_new_host_key), so reusing it would drop the request.
   */
  async startServerVerification(server: ServerRef, options: { trustNewHostKey?: boolean } = {}) {
    const trustNewHostKey = options.trustNewHostKey ?? false;
    const input: VerifyServerInput = {
      serverId: server.id,
      organizationId: server.organizationId,
      maxAttempts: this.serverSettings.verifyMaxAttempts,
      healthIntervalSeconds: this.serverSettings.healthIntervalSeconds,
      trustNewHostKey,
    };
    await this.client.workflow.start<typeof serverVerificationWorkflow>('serverVerificationWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: serverVerifyWorkflowId(server.id),
      args: [input],
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      typedSearchAttributes: serverSearchAttributes(server.organizationId, server.id),
      memo: { title: server.title, host: server.host },
    });
  }

  /** Starts a server's health monitor unless it runs already: repairs monitors lost to a reset Temporal. */
  async ensureHealthMonitor(server: ServerRef) {
    const input: ServerHealthInput = {
      serverId: server.id,
      organizationId: server.organizationId,
      intervalSeconds: this.serverSettings.healthIntervalSeconds,
    };
    await this.client.workflow.start<typeof serverHealthWorkflow>('serverHealthWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: serverHealthWorkflowId(server.id),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: serverSearchAttributes(server.organizationId, server.id),
      memo: { title: server.title, host: server.host },
    });
  }

  /** Puts a run in its server's queue (starting the queue if idle); enqueuing a run twice runs it once. */
  async enqueueRun(run: QueuedRun) {
    await this.client.workflow.signalWithStart<typeof serverRunQueueWorkflow, [QueuedRun]>('serverRunQueueWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: serverRunQueueWorkflowId(run.serverId),
      args: [{ serverId: run.serverId, organizationId: run.organizationId, pending: [] }],
      signal: ENQUEUE_RUN_SIGNAL,
      signalArgs: [run],
      typedSearchAttributes: serverSearchAttributes(run.organizationId, run.serverId),
    });
  }

  /** Asks the server's queue to cancel a run: dropped if still waiting, stopped if running. False when no queue runs. */
  async cancelRun(serverId: string, runId: string): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(serverRunQueueWorkflowId(serverId)).signal(CANCEL_RUN_SIGNAL, { runId });
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  /** Stops verification and health monitoring of a deleted server. */
  async stopServerWorkflows(serverId: string) {
    await Promise.all(
      [serverVerifyWorkflowId(serverId), serverHealthWorkflowId(serverId)].map(async (workflowId) => {
        try {
          await this.client.workflow.getHandle(workflowId).terminate('server deleted');
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }
      }),
    );
  }
}
