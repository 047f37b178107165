import { actorText } from '../../domain/access/actor';
import { actorLineOf, actorOf } from '../../domain/tokens/service';
import { stepLogLocation } from '../logs/step-log';
import { Types } from 'mongoose';
import { ApiError, notFound, unlessTemporalUnreachable } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { MigrationPlanModel } from '../../domain/migration-plans/model';
import { ServerModel } from '../../domain/servers/model';
import { IdentityModel } from '../../domain/access/model';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import type { Action } from '../../domain/access/roles';
import { assertMayDecideStep, checkServer, checkServersOf, readableServerIds } from '../access/gate';
import * as conversations from '../../domain/conversations/store';
import { ConversationModel, MAX_CONVERSATION_STEPS, FINAL_CONVERSATION_STATUSES, type Conversation, type ConversationStep } from '../../domain/conversations/model';
import type { StartConversationInput } from './schemas';
import { toConversationListView, toConversationView } from './views';
import { clip } from '../../domain/text';
import { refuseConversationIfFrozen } from '../freezes/enforce';


/** Whether an AI agent acts: a service account marked as one, or any service account through the MCP door. */
const startedByAgent = async (principal: Principal, viaAgentDoor: boolean) =>
  principal.identity.type === 'service_account' && (viaAgentDoor || !!(await IdentityModel.exists({ _id: principal.identity.id, type: 'service_account', agent: true })));

/** How many conversations about a migration plan are still active (its deletion waits for them). */
export const activeConversationsAbout = (organizationId: string, planId: Types.ObjectId) =>
  ConversationModel.countDocuments({ organization_id: organizationId, chatable_type: 'migration_plan', chatable_id: planId, status: { $in: conversations.ACTIVE_CONVERSATION_STATUSES } });

export function createConversationService({ workflows }: { workflows: WorkflowGateway }) {
  /** A conversation on servers the caller may read (404 otherwise), and do `action` on (403 otherwise). */
  async function find(principal: Principal, id: string, action: Action = 'read') {
    const conversation = await ConversationModel.findOne({ _id: parseId(id, 'Conversation'), organization_id: principal.organizationId }).lean<Conversation>();
    if (!conversation) throw notFound('Conversation');
    await checkServersOf(principal, [conversation.server_id, conversation.source_server_id], 'Conversation', action);
    return conversation;
  }

  /** Conversations as the API shows them, with their workflow's page in the Temporal UI when TEMPORAL_UI_URL is set. */
  const view = (c: Conversation) => ({ ...toConversationView(c), temporal_ui_url: workflows.links.conversation(c._id.toString()) });
  const listView = (c: Conversation) => ({ ...toConversationListView(c), temporal_ui_url: workflows.links.conversation(c._id.toString()) });

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

  const send = (conversation: Conversation, messageId: Types.ObjectId) =>
    unlessTemporalUnreachable('start the conversation', async () => {
      const server = await ServerModel.findById(conversation.server_id, { title: 1 }).lean();
      const message = conversation.messages.find((m) => m._id.equals(messageId)) ?? conversation.messages[0];
      const instruction = (message?.text ?? '').replace(/\s+/g, ' ');
      await workflows.conversations.send({
        id: conversation._id.toString(),
        organizationId: conversation.organization_id.toString(),
        serverId: conversation.server_id.toString(),
        actor: actorText(conversation.actor, conversation.created_by),
        messageId: messageId.toString(),
        summary: `"${clip(instruction, 80)}" on ${server?.title ?? conversation.server_id.toString()}`,
        details: [
          `**Conversation** ${conversation._id.toString()} about a ${conversation.chatable_type.replace('_', ' ')} (${conversation.chatable_id.toString()})`,
          `**Server** ${server?.title ?? ''} (${conversation.server_id.toString()})`,
          `**Started by** ${actorText(conversation.actor, conversation.created_by)}`,
        ].join('\n\n'),
      });
    });

  return {
    /** The conversations on servers the caller may read. */
    async list(principal: Principal, filter: { chatable_type?: string; chatable_id?: string }, page: PageQuery) {
      const readable = await readableServerIds(principal);
      return findPage(
        ConversationModel,
        {
          organization_id: new Types.ObjectId(principal.organizationId),
          ...(readable ? { server_id: { $in: readable }, source_server_id: { $in: [null, ...readable] } } : {}),
          ...(filter.chatable_type ? { chatable_type: filter.chatable_type } : {}),
          ...(filter.chatable_id ? { chatable_id: new Types.ObjectId(filter.chatable_id) } : {}),
        },
        page,
        listView,
      );
    },

    async get(principal: Principal, id: string) {
      return view(await find(principal, id));
    },

    /** Where the whole log of one of its steps is. */
    async stepLogOf(principal: Principal, id: string, stepId: string) {
      const conversation = await find(principal, id);
      const index = (conversation.steps as ConversationStep[]).findIndex((step) => step._id.toString() === stepId.toLowerCase());
      if (index === -1) throw notFound('Step');
      return stepLogLocation(conversation, index + 1, `${conversation._id}`);
    },

    /** Stores the conversation with its first instruction and starts its workflow; nothing is kept if Temporal cannot be reached. */
    async start(principal: Principal, input: StartConversationInput, { viaAgentDoor = false }: { viaAgentDoor?: boolean } = {}) {
      const servers = await resolveChatable(principal, input);
      const agent = await startedByAgent(principal, viaAgentDoor);
      await refuseConversationIfFrozen(principal, [servers.server_id, servers.source_server_id]);
      const messageId = new Types.ObjectId();
      const conversation = await conversations.createConversation({
        organization_id: principal.organizationId,
        chatable_type: input.chatable_type,
        chatable_id: new Types.ObjectId(input.chatable_id),
        ...servers,
        require_approval: input.require_approval,
        agent,
        created_by: principal.tokenName ?? actorLineOf(principal),
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
      const conversation = await find(principal, id, 'conversations:write');
      if (conversation.status === 'cancelled') throw new ApiError('conflict', 'The conversation was cancelled: start a new one');
      if (conversation.steps.length >= MAX_CONVERSATION_STEPS) {
        throw new ApiError('conflict', `The conversation holds ${MAX_CONVERSATION_STEPS} steps, the most it may: start a new one`);
      }
      await refuseConversationIfFrozen(principal, [conversation.server_id, conversation.source_server_id]);
      // An agent's instruction in anyone's conversation is held as an agent's.
      if (!conversation.agent && (await startedByAgent(principal, viaAgentDoor))) await conversations.markAgentConversation(conversation._id);
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
      return view(await find(principal, id));
    },

    /** Approves or rejects a step that waits for a person. */
    async decide(principal: Principal, id: string, stepId: string, approved: boolean) {
      const conversation = await find(principal, id, 'conversations:write');
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
      return view(await find(principal, id));
    },

    /** Stops the running command; every step not finished fails as cancelled, and the conversation ends cancelled. */
    async cancel(principal: Principal, id: string) {
      const conversation = await find(principal, id, 'conversations:write');
      if (FINAL_CONVERSATION_STATUSES.includes(conversation.status)) throw new ApiError('conflict', `The conversation has already ended (${conversation.status})`);
      await conversations.recordCancelRequest(conversation._id, actorOf(principal));
      const found = await unlessTemporalUnreachable('cancel', () => workflows.conversations.cancel(id));
      // Its workflow is gone (terminated by hand, or Temporal's data was reset): close it here.
      if (!found) await conversations.cancelWithoutWorkflow(conversation);
      return view(await find(principal, id));
    },
  };
}

export type ConversationService = ReturnType<typeof createConversationService>;
