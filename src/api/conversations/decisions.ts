import { actorLineOf, actorOf } from '../../domain/tokens/service';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import * as conversations from '../../domain/conversations/store';
import { FINAL_CONVERSATION_STATUSES, type ConversationStep } from '../../domain/conversations/model';
import type { ConversationReads } from './reads';
import { assertMayDecideStep } from '../access/gate';

/*
 * What people decide about a running conversation: a step that waits approved or rejected (by a
 * person only), or the whole conversation cancelled.
 */
export function conversationDecisions({ workflows, reads }: { workflows: WorkflowGateway; reads: ConversationReads }) {
  return {
    /** Approves or rejects a step that waits for a person. */
    async decide(principal: Principal, id: string, stepId: string, approved: boolean) {
      const conversation = await reads.find(principal, id, 'conversations:write');
      const step = (conversation.steps as ConversationStep[]).find((s) => s._id.toString() === stepId.toLowerCase());
      if (!step) throw notFound('Step');
      // What the step's state refuses comes first (as for a run's gate); then who may decide.
      if (!step.approval || step.approval.decision || step.status !== 'pending') {
        throw new ApiError('conflict', step.approval?.decision ? `The step was already ${step.approval.decision}` : 'The step is not waiting for approval');
      }
      // A person decides: an agent (or any service account) never approves, not even its own steps.
      assertMayDecideStep(principal);
      const delivered = await unlessTemporalUnreachable('pass on the decision', () =>
        workflows.conversations.decide(id, { stepId: step._id.toString(), approved, by: actorLineOf(principal) }),
      );
      if (delivered === 'refused') throw new ApiError('conflict', 'The step already has a decision');
      if (delivered === 'gone') throw new ApiError('conflict', 'The conversation is no longer running');
      if (delivered === 'unanswered') {
        throw new ApiError('service_unavailable', 'No worker took the decision in time (are the workers running?); it may still apply when one does: read the conversation before deciding again');
      }
      return reads.viewOf(principal, id);
    },

    /** Stops the running command; every step not finished fails as cancelled, and the conversation ends cancelled. */
    async cancel(principal: Principal, id: string) {
      const conversation = await reads.find(principal, id, 'conversations:write');
      if (FINAL_CONVERSATION_STATUSES.includes(conversation.status)) throw new ApiError('conflict', `The conversation has already ended (${conversation.status})`);
      await conversations.recordCancelRequest(conversation._id, actorOf(principal));
      const found = await unlessTemporalUnreachable('cancel', () => workflows.conversations.cancel(id));
      // Its workflow is gone (terminated by hand, or Temporal's data was reset): close it here.
      if (!found) await conversations.cancelWithoutWorkflow(conversation);
      return reads.viewOf(principal, id);
    },
  };
}
