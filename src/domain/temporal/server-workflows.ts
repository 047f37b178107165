import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { serverSearchAttributes } from '../contracts/search-attributes';
import type { ServerHealthInput, VerifyServerInput } from '../contracts/servers';
import type { WorkflowSignatures } from '../contracts/signatures';
import { serverHealthWorkflowId, serverVerifyWorkflowId } from '../contracts/workflow-ids';

export interface ServerRef {
  id: string;
  organizationId: string;
  title: string;
  host: string;
}

/** How a person reads a server in the Temporal UI. */
const serverLabel = (server: ServerRef) => `${server.title} (${server.host})`;

/** What the Temporal UI shows for a server's verification or health monitor. */
const serverWorkflowMetadata = (what: string, server: ServerRef) => ({
  staticSummary: `${what} ${serverLabel(server)}`,
  staticDetails: `**Server** ${server.title} (${server.id}), ${server.host}`,
});

/** Servers' workflows: one verification and one health monitor per server. */
export class ServerWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly settings: { verifyMaxAttempts: number; healthIntervalSeconds: number },
  ) {}

  /**
   * Starts verification now. A verification already running is replaced: it may be about to finish
   * with a result older than the request (and without its trust_new_host_key), so reusing it would drop the request.
   */
  async verify(server: ServerRef, options: { trustNewHostKey?: boolean } = {}) {
    const trustNewHostKey = options.trustNewHostKey ?? false;
    const input: VerifyServerInput = {
      serverId: server.id,
      organizationId: server.organizationId,
      maxAttempts: this.settings.verifyMaxAttempts,
      healthIntervalSeconds: this.settings.healthIntervalSeconds,
      trustNewHostKey,
      serverLabel: serverLabel(server),
    };
    await this.client.workflow.start<WorkflowSignatures['serverVerificationWorkflow']>('serverVerificationWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: serverVerifyWorkflowId(server.id),
      args: [input],
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      typedSearchAttributes: serverSearchAttributes(server.organizationId, server.id),
      memo: { title: server.title, host: server.host },
      ...serverWorkflowMetadata('Verify', server),
    });
  }

  /** Starts a server's health monitor unless it runs already: repairs monitors lost to a reset Temporal. */
  async ensureHealthMonitor(server: ServerRef) {
    const input: ServerHealthInput = {
      serverId: server.id,
      organizationId: server.organizationId,
      intervalSeconds: this.settings.healthIntervalSeconds,
    };
    await this.client.workflow.start<WorkflowSignatures['serverHealthWorkflow']>('serverHealthWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: serverHealthWorkflowId(server.id),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: serverSearchAttributes(server.organizationId, server.id),
      memo: { title: server.title, host: server.host },
      ...serverWorkflowMetadata('Watch the health of', server),
    });
  }

  /** Stops verification and health monitoring of a deleted server. */
  async stop(serverId: string) {
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
