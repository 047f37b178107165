import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';
import type { StepDecision } from '../contracts/conversations';
import { conversationSearchAttributes } from '../contracts/search-attributes';
import type { WorkflowSignatures } from '../contracts/signatures';
import { CONVERSATION_MESSAGE_SIGNAL, conversationWorkflowId, STEP_DECISION_UPDATE } from '../contracts/workflow-ids';
import { cancelIfRunning } from './handles';

/** Conversations' workflows: one per conversation, started by its first message (or one after it went idle). */
export class ConversationWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /**
   * Hands an instruction to its conversation's workflow, starting the workflow when none runs (the
   * first message, or a follow-up after the conversation went idle).
   */
  async send(conversation: { id: string; organizationId: string; serverId: string; actor: string; messageId: string; summary: string; details: string }) {
    await this.client.workflow.signalWithStart<WorkflowSignatures['conversationWorkflow'], [{ messageId: string }]>('conversationWorkflow', {
      taskQueue: this.taskQueue,
      workflowId: conversationWorkflowId(conversation.id),
      args: [{ conversationId: conversation.id, organizationId: conversation.organizationId, inbox: [] }],
      signal: CONVERSATION_MESSAGE_SIGNAL,
      signalArgs: [{ messageId: conversation.messageId }],
      typedSearchAttributes: conversationSearchAttributes(conversation.organizationId, conversation.serverId, conversation.actor),
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
  async decide(conversationId: string, decision: StepDecision, timeoutMs = 10_000): Promise<'accepted' | 'refused' | 'gone' | 'unanswered'> {
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
  cancel(conversationId: string): Promise<boolean> {
    return cancelIfRunning(this.client, conversationWorkflowId(conversationId));
  }
}
