import { stepLogLocation } from '../logs/step-log';
import { Types } from 'mongoose';
import { notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import type { WorkflowGateway } from '../../domain/temporal/client';
import type { Principal } from '../../domain/tokens/service';
import type { Action } from '../../domain/access/roles';
import { checkServersOf, readableServerIds } from '../access/gate';
import { ConversationModel, type Conversation, type ConversationStep } from '../../domain/conversations/model';
import { toConversationListView, toConversationView } from './views';

/*
 * Conversations as the caller may see them: one found on servers the caller may read (and act on),
 * the list filtered by the same answer, a step's whole log; each view with its workflow's page in the
 * Temporal UI when TEMPORAL_UI_URL is set.
 */
export function conversationReads({ links }: { links: WorkflowGateway['links'] }) {
  /** A conversation on servers the caller may read (404 otherwise), and do `action` on (403 otherwise). */
  async function find(principal: Principal, id: string, action: Action = 'read') {
    const conversation = await ConversationModel.findOne({ _id: parseId(id, 'Conversation'), organization_id: principal.organizationId }).lean<Conversation>();
    if (!conversation) throw notFound('Conversation');
    await checkServersOf(principal, [conversation.server_id, conversation.source_server_id], 'Conversation', action);
    return conversation;
  }

  const view = (c: Conversation) => ({ ...toConversationView(c), temporal_ui_url: links.conversation(c._id.toString()) });
  const listView = (c: Conversation) => ({ ...toConversationListView(c), temporal_ui_url: links.conversation(c._id.toString()) });

  return {
    find,

    /** The conversation as the API shows it, read again (after a change). */
    viewOf: async (principal: Principal, id: string) => view(await find(principal, id)),

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
  };
}

export type ConversationReads = ReturnType<typeof conversationReads>;
