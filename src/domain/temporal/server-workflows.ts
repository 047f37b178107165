import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { serverSearchAttributes } from '../contracts/search-attributes';
import type { VerifyServerInput } from '../contracts/servers';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import type { WorkflowSignatures } from '../contracts/signatures';
import { inventoryVerificationWorkflowId, serverHealthSweepWorkflowId, serverHealthWorkflowId, SERVERS_TO_WATCH_SIGNAL, serverVerifyWorkflowId } from '../contracts/workflow-ids';

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

/**
 * Starts an organization's health sweep unless it runs, and tells it there are servers to watch (a
 * server verified, a worker started): one signal-with-start, so a sweep about to end for want of
 * servers carries on instead.
 */
export function watchOrganizationServers(client: Client, taskQueue: string, organizationId: string, intervalSeconds: number) {
  return client.workflow.signalWithStart<WorkflowSignatures['serverHealthSweepWorkflow'], []>('serverHealthSweepWorkflow', {
    taskQueue,
    workflowId: serverHealthSweepWorkflowId(organizationId),
    args: [{ organizationId, intervalSeconds }],
    signal: SERVERS_TO_WATCH_SIGNAL,
    signalArgs: [],
    typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.organization, value: organizationId }],
    staticSummary: "Watch the health of the organization's servers",
    staticDetails: `**Organization** ${organizationId}: each verified or offline server checked every interval`,
  });
}

/** Servers' workflows: a verification per server; a health sweep per organization. */
export class ServerWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly settings: { verifyMaxAttempts: number; healthIntervalSeconds: number; importVerifyConcurrency?: number },
  ) {}

  /**
   * Starts verification now. A verification already running is replaced: it may be about to finish
   * with a result older than the request (and without its trust_new_host_key), so reusing it would drop the request.
   */
  async verify(server: ServerRef, options: { trustNewHostKey?: boolean } = {}) {
    const input = this.verifyInput(server, options.trustNewHostKey ?? false);
    await this.start('serverVerificationWorkflow', server, serverVerifyWorkflowId(server.id), input, 'TERMINATE_EXISTING', 'Verify');
  }

  /** How many servers an import verifies at once (IMPORT_VERIFY_CONCURRENCY). */
  get importConcurrency(): number {
    return this.settings.importVerifyConcurrency ?? 8;
  }

  /** Starts the verification of the servers an inventory import added: IMPORT_VERIFY_CONCURRENCY at a time, by one workflow. */
  async verifyImported(importId: string, organizationId: string, source: string, servers: Array<ServerRef & { after?: string[] }>) {
    await this.client.workflow.start<WorkflowSignatures['inventoryVerificationWorkflow']>('inventoryVerificationWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: inventoryVerificationWorkflowId(importId),
      args: [{ organizationId, source, concurrency: this.importConcurrency, servers: servers.map((server) => ({ ...this.verifyInput(server, false), ...(server.after?.length ? { after: server.after } : {}) })) }],
      typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.organization, value: organizationId }],
      staticSummary: `Verify the ${servers.length} servers imported from ${source}`,
    });
  }

  private verifyInput(server: ServerRef, trustNewHostKey: boolean): VerifyServerInput {
    return {
      serverId: server.id,
      organizationId: server.organizationId,
      maxAttempts: this.settings.verifyMaxAttempts,
      healthIntervalSeconds: this.settings.healthIntervalSeconds,
      trustNewHostKey,
      serverLabel: serverLabel(server),
    };
  }

  /** Starts an organization's health sweep unless it runs already: at a worker's start, repairs sweeps lost to a reset Temporal. */
  async watchHealth(organizationId: string) {
    await watchOrganizationServers(this.client, this.taskQueue, organizationId, this.settings.healthIntervalSeconds);
  }

  /** One of a server's workflows, found in the Temporal UI by its organization and server, titled and summarised for a person. */
  private async start<Name extends 'serverVerificationWorkflow'>(
    name: Name,
    server: ServerRef,
    workflowId: string,
    input: Parameters<WorkflowSignatures[Name]>[0],
    workflowIdConflictPolicy: 'TERMINATE_EXISTING' | 'USE_EXISTING',
    what: string,
  ) {
    await this.client.workflow.start<WorkflowSignatures[Name]>(name, {
      taskQueue: this.taskQueue,
      workflowId,
      args: [input] as Parameters<WorkflowSignatures[Name]>,
      workflowIdConflictPolicy,
      typedSearchAttributes: serverSearchAttributes(server.organizationId, server.id),
      memo: { title: server.title, host: server.host },
      ...serverWorkflowMetadata(what, server),
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
