import type { Client } from '@temporalio/client';
import { conversationWorkflowId, deploymentRunWorkflowId } from '../contracts/workflow-ids';
import { ConfigSourceWorkflows } from './config-source-workflows';
import { ConversationWorkflows } from './conversation-workflows';
import { isOpen, workflowExists } from './handles';
import { ScheduleWorkflows } from './schedules';
import { QueueWakes } from './queue-wakes';
import { Reachability } from './reachability';
import { PipelineWorkflows } from './pipeline-workflows';
import { RunWorkflows } from './run-workflows';
import { ServerWorkflows } from './server-workflows';

export { connectTemporal, type TemporalSettings } from './connection';
export type { ServerRef } from './server-workflows';

/** Links to workflows' pages in the Temporal Web UI, when TEMPORAL_UI_URL is set. */
export class UiLinks {
  constructor(
    private readonly namespace: string,
    private readonly uiUrl?: string,
  ) {}

  /** The Web UI page of a deployment run's workflow, or undefined without TEMPORAL_UI_URL. */
  run(runId: string): string | undefined {
    return this.workflow(deploymentRunWorkflowId(runId));
  }

  /** The Web UI page of a conversation's workflow, or undefined without TEMPORAL_UI_URL. */
  conversation(conversationId: string): string | undefined {
    return this.workflow(conversationWorkflowId(conversationId));
  }

  private workflow(workflowId: string): string | undefined {
    if (!this.uiUrl) return undefined;
    return `${this.uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(this.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  }
}

/**
 * The only way the API and the worker's sweeps reach Temporal: business ids, search attributes and
 * conflict policies live in its parts — runs, queue wakes, servers, conversations — beside whether
 * Temporal looks reachable and links to its Web UI.
 */
export class WorkflowGateway {
  readonly reachability: Reachability;
  readonly runs: RunWorkflows;
  readonly pipelines: PipelineWorkflows;
  readonly queues: QueueWakes;
  readonly servers: ServerWorkflows;
  readonly conversations: ConversationWorkflows;
  readonly schedules: ScheduleWorkflows;
  readonly configSources: ConfigSourceWorkflows;
  readonly links: UiLinks;

  constructor(
    private readonly client: Client,
    taskQueue: string,
    serverSettings: { verifyMaxAttempts: number; healthIntervalSeconds: number; importVerifyConcurrency?: number },
    /** The Temporal Web UI (TEMPORAL_UI_URL), for links from runs and conversations to their workflows. */
    uiUrl?: string,
  ) {
    this.reachability = new Reachability(client);
    this.runs = new RunWorkflows(client, taskQueue, this.reachability);
    this.pipelines = new PipelineWorkflows(client, taskQueue, this.reachability);
    this.queues = new QueueWakes(client, taskQueue, this.reachability);
    this.servers = new ServerWorkflows(client, taskQueue, serverSettings);
    this.conversations = new ConversationWorkflows(client, taskQueue);
    this.schedules = new ScheduleWorkflows(client, taskQueue);
    this.configSources = new ConfigSourceWorkflows(client, taskQueue);
    this.links = new UiLinks(client.options.namespace, uiUrl);
  }

  /** Is this workflow (a run's, or a fleet target's) still open? False when it ended (or never existed). */
  workflowOpen(workflowId: string): Promise<boolean> {
    return isOpen(this.client, workflowId);
  }

  /** Has Temporal a workflow of this id, open or closed? */
  workflowOpenOrClosed(workflowId: string): Promise<boolean> {
    return workflowExists(this.client, workflowId);
  }
}
