import type { Types } from 'mongoose';
import type { WorkflowGateway } from '../../domain/temporal/client';
import * as conversations from '../../domain/conversations/store';
import { ConversationModel } from '../../domain/conversations/model';
import { conversationReads } from './reads';
import { conversationInstructions } from './instructions';
import { conversationDecisions } from './decisions';

/** How many conversations about a migration plan are still active (its deletion waits for them). */
export const activeConversationsAbout = (organizationId: string, planId: Types.ObjectId) =>
  ConversationModel.countDocuments({ organization_id: organizationId, chatable_type: 'migration_plan', chatable_id: planId, status: { $in: conversations.ACTIVE_CONVERSATION_STATUSES } });

/**
 * What the conversation routes call, composed from one file per seam: reads (one conversation, the
 * list, a step's log), instructions (a conversation started, a follow-up), and people's decisions
 * (a step approved or rejected, a cancel).
 */
export function createConversationService({ workflows }: { workflows: WorkflowGateway }) {
  const reads = conversationReads({ links: workflows.links });
  const { list, get, stepLogOf } = reads;
  return {
    list,
    get,
    stepLogOf,
    ...conversationInstructions({ workflows, reads }),
    ...conversationDecisions({ workflows, reads }),
  };
}

export type ConversationService = ReturnType<typeof createConversationService>;
