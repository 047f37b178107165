import { createdByText } from '../../domain/access/actor';
import { actorLineOf, actorOf, recordedByOf } from '../../domain/tokens/service';
import { Types } from 'mongoose';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import { MigrationPlanModel } from '../../domain/migration-plans/model';
import { ServerModel } from '../../domain/servers/model';
import { actsAsAgent } from '../mcp/agent-door';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import { checkServer, checkServersOf } from '../access/gate';
import * as conversations from '../../domain/conversations/store';
import { MAX_CONVERSATION_STEPS, type Conversation } from '../../domain/conversations/model';
import type { StartConversationInput } from './schemas';
import { clip } from '../../domain/text';
import { refuseConversationIfFrozen } from '../freezes/enforce';
import type { ConversationReads } from './reads';

/*
 * Instructions in plain English: a conversation started with its first one, or another sent to it;
 * each stored, then given to the conversation's workflow, and taken back if Temporal cannot be reached.
 */

/** The server a conversation works on, or for a migration plan its two servers. Another organization's looks like none. */
async function resolveChatable(principal: Principal, input: StartConversationInput) {
  const { organizationId } = principal;
  const id = new Types.ObjectId(input.chatable_id);
  if (input.chatable_type === 'server') {
    const server = checkServer(principal, await ServerModel.findOne({ _id: id, organization_id: organizationId }, { host_key_fingerprint: 1, title: 1, tags: 1 }).lean(), 'conversations:write');
    if (!server.host_key_fingerprint) throw new ApiError('conflict', 'The server has not been verified yet: its host key is unknown, so Bosun will not connect');
    return { server_id: server._id, source_server_id: null };
  }
  const plan = await MigrationPlanModel.findOne({ _id: id, organization_id: organizationId }).lean();
  if (!plan) throw notFound('Migration plan');
  await checkServersOf(principal, [plan.source_server_id, plan.target_server_id], 'Migration plan', 'conversations:write');
  return { server_id: plan.target_server_id, source_server_id: plan.source_server_id };
}

export function conversationInstructions({ workflows, reads }: { workflows: WorkflowGateway; reads: ConversationReads }) {
  const send = (conversation: Conversation, messageId: Types.ObjectId) =>
    unlessTemporalUnreachable('start the conversation', async () => {
      const server = await ServerModel.findById(conversation.server_id, { title: 1 }).lean();
      const message = conversation.messages.find((m) => m._id.equals(messageId)) ?? conversation.messages[0];
      const instruction = (message?.text ?? '').replace(/\s+/g, ' ');
      await workflows.conversations.send({
        id: conversation._id.toString(),
        organizationId: conversation.organization_id.toString(),
        serverId: conversation.server_id.toString(),
        actor: createdByText(conversation),
        messageId: messageId.toString(),
        summary: `"${clip(instruction, 80)}" on ${server?.title ?? conversation.server_id.toString()}`,
        details: [
          `**Conversation** ${conversation._id.toString()} about a ${conversation.chatable_type.replace('_', ' ')} (${conversation.chatable_id.toString()})`,
          `**Server** ${server?.title ?? ''} (${conversation.server_id.toString()})`,
          `**Started by** ${createdByText(conversation)}`,
        ].join('\n\n'),
      });
    });

  return {
    /** Stores the conversation with its first instruction and starts its workflow; nothing is kept if Temporal cannot be reached. */
    async start(principal: Principal, input: StartConversationInput, { viaAgentDoor = false }: { viaAgentDoor?: boolean } = {}) {
      const servers = await resolveChatable(principal, input);
      const agent = await actsAsAgent(principal, viaAgentDoor);
      await refuseConversationIfFrozen(principal, [servers.server_id, servers.source_server_id]);
      const messageId = new Types.ObjectId();
      const conversation = await conversations.createConversation({
        organization_id: principal.organizationId,
        chatable_type: input.chatable_type,
        chatable_id: new Types.ObjectId(input.chatable_id),
        ...servers,
        require_approval: input.require_approval,
        agent,
        created_by: recordedByOf(principal),
        actor: actorOf(principal),
        message: { _id: messageId, text: input.message, sent_by: actorLineOf(principal), ...(input.commands ? { commands: input.commands } : {}) },
      });
      try {
        await send(conversation, messageId);
      } catch (error) {
        await conversations.deleteConversation(conversation._id);
        throw error;
      }
      return { id: conversation._id.toString(), status: conversation.status, created_at: conversation.createdAt.toISOString() };
    },

    /** A follow-up instruction: planned and run after the current ones. A cancelled conversation takes none. */
    async followUp(principal: Principal, id: string, text: string, { viaAgentDoor = false }: { viaAgentDoor?: boolean } = {}) {
      const conversation = await reads.find(principal, id, 'conversations:write');
      if (conversation.status === 'cancelled') throw new ApiError('conflict', 'The conversation was cancelled: start a new one');
      if (conversation.steps.length >= MAX_CONVERSATION_STEPS) {
        throw new ApiError('conflict', `The conversation holds ${MAX_CONVERSATION_STEPS} steps, the most it may: start a new one`);
      }
      await refuseConversationIfFrozen(principal, [conversation.server_id, conversation.source_server_id]);
      // An agent's instruction in anyone's conversation is held as an agent's.
      if (!conversation.agent && (await actsAsAgent(principal, viaAgentDoor))) await conversations.markAgentConversation(conversation._id);
      const messageId = new Types.ObjectId();
      // Running again at once, so a client polling for the end does not stop at the previous one.
      const pushed = await conversations.addMessage(conversation._id, { _id: messageId, text, sent_by: actorLineOf(principal) });
      if (!pushed) throw new ApiError('conflict', 'The conversation was cancelled: start a new one');
      try {
        await send(conversation, messageId);
      } catch (error) {
        await conversations.withdrawMessage(conversation._id, messageId, conversation);
        throw error;
      }
      return reads.viewOf(principal, id);
    },
  };
}
