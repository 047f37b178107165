import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import {
  CONVERSATION_MESSAGE_SIGNAL,
  conversationSearchAttributes,
  conversationWorkflowId,
  STEP_DECISION_UPDATE,
  type StepDecision,
  deploymentRunWorkflowId,
  fleetWorkflowMetadata,
  SEARCH_ATTRIBUTES,
  type FleetRunInput,
  serverHealthWorkflowId,
  serverRunQueueWorkflowId,
  WAKE_QUEUE_SIGNAL,
  serverSearchAttributes,
  serverVerifyWorkflowId,
  type ServerHealthInput,
  type VerifyServerInput,
  type WorkflowSignatures,
} from '../../../workflows/contracts';
import type { TemporalSecurity } from '../../config';
import { connectionOptions } from './connection';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  security?: TemporalSecurity;
}

/** Connects, waiting up to waitMs for a Temporal that is still starting (containers start in any order). */
export async function connectTemporal(settings: TemporalSettings, waitMs = 0): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address: settings.address, ...connectionOptions(settings.security) });
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

/** How a person reads a server in the Temporal UI. */
const serverLabel = (server: ServerRef) => `${server.title} (${server.host})`;

/** What the Temporal UI shows for a server's verification or health monitor. */
const serverWorkflowMetadata = (what: string, server: ServerRef) => ({
  staticSummary: `${what} ${serverLabel(server)}`,
  staticDetails: `**Server** ${server.title} (${server.id}), ${server.host}`,
});

/** How often triggers have Temporal's frontend checked in the background, and how long a check may take. */
const REACHABILITY_CHECK_MS = 1000;

/** The only way HTTP code reaches Temporal: business ids, search attributes and conflict policies live here. */
export class WorkflowGateway {
  private readonly inFlightWakes = new Map<string, Promise<void>>();
  private readonly waitingWakes = new Map<string, Promise<void>>();
  /** Set when a wake could not reach Temporal, cleared by the next that did. */
  private lastWakeFailed = false;
  /** What the latest check of Temporal's frontend found, and when it was asked. */
  private frontendAnswered = true;
  private lastCheckAt = 0;
  private checking = false;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly serverSettings: { verifyMaxAttempts: number; healthIntervalSeconds: number },
    /** The Temporal Web UI (TEMPORAL_UI_URL), for links from runs and conversations to their workflows. */
    private readonly uiUrl?: string,
  ) {}

  /** Asks Temporal's frontend for its system info: does it answer within timeoutMs? Throws when not. */
  async checkReachable(timeoutMs: number): Promise<void> {
    const { connection } = this.client;
    this.lastCheckAt = Date.now();
    try {
      await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
      this.frontendAnswered = true;
    } catch (error) {
      this.frontendAnswered = false;
      throw error;
    }
  }

  /** The Web UI page of a deployment run's workflow, or undefined without TEMPORAL_UI_URL. */
  runUiUrl(runId: string): string | undefined {
    return this.workflowUiUrl(deploymentRunWorkflowId(runId));
  }

  /** The Web UI page of a conversation's workflow, or undefined without TEMPORAL_UI_URL. */
  conversationUiUrl(conversationId: string): string | undefined {
    return this.workflowUiUrl(conversationWorkflowId(conversationId));
  }

  private workflowUiUrl(workflowId: string): string | undefined {
    if (!this.uiUrl) return undefined;
    return `${this.uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(this.client.options.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  }

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
      intervalSeconds: this.serverSettings.healthIntervalSeconds,
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

  /**
   * Wakes a server's run queue (starting it if idle) so it reads the runs committed before this call.
   * Wakes carry nothing, so concurrent triggers share them: at most one in flight and one waiting per
   * server, instead of one signal per trigger applied one at a time to the same workflow.
   */
  wakeQueue(serverId: string, organizationId: string): Promise<void> {
    const waiting = this.waitingWakes.get(serverId);
    if (waiting) return waiting;
    const inFlight = this.inFlightWakes.get(serverId);
    const send = async () => {
      this.waitingWakes.delete(serverId);
      const signal = this.client.workflow
        .signalWithStart<WorkflowSignatures['serverRunQueueWorkflow'], []>('serverRunQueueWorkflow', {
          taskQueue: this.taskQueue,
          workflowId: serverRunQueueWorkflowId(serverId),
          args: [{ serverId, organizationId }],
          signal: WAKE_QUEUE_SIGNAL,
          signalArgs: [],
          typedSearchAttributes: serverSearchAttributes(organizationId, serverId),
          staticSummary: `Deployment runs of server ${serverId}, one at a time`,
        })
        .then(
          () => {
            this.lastWakeFailed = false;
          },
          (error: unknown) => {
            this.lastWakeFailed = true;
            throw error;
          },
        );
      this.inFlightWakes.set(serverId, signal);
      try {
        await signal;
      } finally {
        if (this.inFlightWakes.get(serverId) === signal) this.inFlightWakes.delete(serverId);
      }
    };
    // A wake already on its way may have been read before our run was committed: send another after it.
    const next = inFlight ? inFlight.catch(() => undefined).then(send) : send();
    if (inFlight) this.waitingWakes.set(serverId, next);
    return next;
  }

  /**
   * Does Temporal look reachable right now? False when the latest check of its frontend failed (by the
   * readiness endpoint, or the one this asks for in the background at most once a second while
   * triggers come) or the latest wake failed: then a trigger waits for its wake (and answers 503 if
   * it fails) instead of answering first. Never waits for the network itself.
   */
  looksReachable(): boolean {
    if (!this.checking && Date.now() - this.lastCheckAt >= REACHABILITY_CHECK_MS) {
      this.checking = true;
      this.checkReachable(REACHABILITY_CHECK_MS)
        .catch(() => undefined)
        .finally(() => {
          this.checking = false;
        });
    }
    return this.frontendAnswered && !this.lastWakeFailed;
  }

  /**
   * Starts a fleet run's workflow (`deployment-run-<run id>`), or finds it started: the trigger, and
   * the workers' sweep after a start that was lost, may both ask.
   */
  async startFleetRun(run: FleetRunInput, targets: number): Promise<void> {
    await this.client.workflow
      .start<WorkflowSignatures['deploymentFleetWorkflow']>('deploymentFleetWorkflow', {
        taskQueue: this.taskQueue,
        workflowId: deploymentRunWorkflowId(run.runId),
        args: [run],
        workflowIdConflictPolicy: 'USE_EXISTING',
        // One run, one workflow: a finished one is never started again.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.organization, value: run.organizationId },
          { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
        ],
        memo: { deployment: run.deploymentName, triggered_by: run.triggeredBy },
        ...fleetWorkflowMetadata(run, targets),
      })
      .then(
        () => {
          this.lastWakeFailed = false;
        },
        (error: unknown) => {
          if (error instanceof WorkflowExecutionAlreadyStartedError) return;
          this.lastWakeFailed = true;
          throw error;
        },
      );
  }

  /** Is this workflow (a run's, or a fleet target's) still open? False when it ended (or never existed). */
  async workflowOpen(workflowId: string): Promise<boolean> {
    try {
      return (await this.client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  /** Is the run's workflow still open? False when it ended (or never existed). */
  runWorkflowOpen(runId: string): Promise<boolean> {
    return this.workflowOpen(deploymentRunWorkflowId(runId));
  }

  /** Cancels a running run's workflow; false when it has ended (terminated by hand, say) or does not exist (not started, or long gone). */
  cancelRunWorkflow(runId: string): Promise<boolean> {
    return this.cancelIfRunning(deploymentRunWorkflowId(runId));
  }

  /** Requests a workflow's cancellation; false when it is no longer running (a closed workflow takes none) or never was. */
  private async cancelIfRunning(workflowId: string): Promise<boolean> {
    try {
      const handle = this.client.workflow.getHandle(workflowId);
      if ((await handle.describe()).status.name !== 'RUNNING') return false;
      await handle.cancel();
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

  /**
   * Hands an instruction to its conversation's workflow, starting the workflow when none runs (the
   * first message, or a follow-up after the conversation went idle).
   */
  async sendConversationMessage(conversation: { id: string; organizationId: string; serverId: string; messageId: string; summary: string; details: string }) {
    await this.client.workflow.signalWithStart<WorkflowSignatures['conversationWorkflow'], [{ messageId: string }]>('conversationWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: conversationWorkflowId(conversation.id),
      args: [{ conversationId: conversation.id, organizationId: conversation.organizationId, inbox: [] }],
      signal: CONVERSATION_MESSAGE_SIGNAL,
      signalArgs: [{ messageId: conversation.messageId }],
      typedSearchAttributes: conversationSearchAttributes(conversation.organizationId, conversation.serverId),
      // Shown when this call starts the workflow (a conversation's first message, or one after it went idle).
      staticSummary: conversation.summary,
      staticDetails: conversation.details,
    });
  }

  /**
   * Passes a person's decision on a step to the conversation's workflow: 'accepted', 'refused' (it
   * already has a decision for the step), 'gone' (the workflow no longer runs), or 'unanswered' (no
   * worker took it within timeoutMs; Temporal may still hand it to the next worker that runs).
   */
  async decideConversationStep(conversationId: string, decision: StepDecision, timeoutMs = 10_000): Promise<'accepted' | 'refused' | 'gone' | 'unanswered'> {
    const { connection } = this.client;
    try {
      // An update waits for a worker to take it: without a deadline, the request would hang while every worker is down.
      await connection.withDeadline(Date.now() + timeoutMs, () =>
        this.client.workflow.getHandle(conversationWorkflowId(conversationId)).executeUpdate(STEP_DECISION_UPDATE, { args: [decision] }),
      );
      return 'accepted';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'gone';
      if (error instanceof WorkflowUpdateFailedError) return 'refused';
      if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'unanswered';
      throw error;
    }
  }

  /** Cancels a conversation's workflow (its running command is killed); false when none runs. */
  cancelConversation(conversationId: string): Promise<boolean> {
    return this.cancelIfRunning(conversationWorkflowId(conversationId));
  }
}
