import { stepLogOperation } from '../logs/openapi';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { conversationListQuerySchema, followUpSchema, startConversationSchema } from './schemas';
import { conversationListItemSchema, conversationSchema, conversationStartedSchema } from './views';

const tag = 'Conversations';
const id = { id: idParam('conversation') };

const decision = (action: 'approve' | 'reject'): Operation => ({
  method: 'post', path: `/api/v1/conversations/:id/steps/:stepId/${action}`, operationId: `${action}Step`, tag, scope: 'conversations:write',
  summary: `${action === 'approve' ? 'Approve' : 'Reject'} a step that waits for approval`,
  description:
    action === 'approve'
      ? 'Only a `pending` step that waits for approval takes a decision; a second decision is a 409. People only: a service account (an agent) answers 403 `people_only`.'
      : 'The step fails without running and the conversation ends `cancelled`. A second decision is a 409. People only: a service account answers 403 `people_only`.',
  params: { ...id, stepId: idParam('step') },
  responses: { 202: { description: 'Decided; the conversation as it is', body: dataOf(conversationSchema) } },
  errors: ['not_found', 'people_only', 'conflict', 'service_unavailable'],
});

export const conversationOperations: Operation[] = [
  stepLogOperation('/api/v1/conversations/:id/steps/:stepId/log', 'getConversationStepLog', tag, { ...id, stepId: idParam('step') }),
  {
    method: 'post', path: '/api/v1/conversations', operationId: 'startConversation', tag, scope: 'conversations:write',
    summary: 'Start a conversation',
    description:
      'A plain-English instruction about a server or a migration plan, planned into steps and run asynchronously. ' +
      'With `commands`, those commands run as they are (one step each) and `message` says why. ' +
      'Started by a service account (an AI agent), its `destructive` steps — and its `change` steps unless the policy\'s `agents_require_approval_for_change` is false — wait for a person. ' +
      'A server or plan of another organization: 404; an unverified server: 409.',
    body: { schema: startConversationSchema, required: true },
    responses: { 201: { description: 'Started, `running`', body: dataOf(conversationStartedSchema), headers: locationHeader('conversation') } },
    errors: ['not_found', 'conflict', 'frozen', 'validation_failed', 'service_unavailable'],
    beyondSchema: ['`commands` with a `chatable_type` other than `server` (commands run on one server; `details` names `commands`)'],
  },
  {
    method: 'get', path: '/api/v1/conversations', operationId: 'listConversations', tag, scope: 'read',
    summary: 'List conversations',
    description: 'Newest first, paginated like servers, optionally filtered by what they are about.',
    query: pageQuerySchema.extend(conversationListQuerySchema.shape),
    responses: { 200: { description: 'One page of conversations', body: pageOf(conversationListItemSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/conversations/:id', operationId: 'getConversation', tag, scope: 'read',
    summary: 'Read a conversation, with every step and its execution log',
    params: id,
    responses: { 200: { description: 'The conversation', body: dataOf(conversationSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'post', path: '/api/v1/conversations/:id/messages', operationId: 'followUpConversation', tag, scope: 'conversations:write',
    summary: 'Send a follow-up instruction',
    description: 'Planned and run after the current ones. A cancelled conversation takes none, and a conversation holds at most 100 steps (409).',
    params: id,
    body: { schema: followUpSchema, required: true },
    responses: { 202: { description: 'Accepted; the conversation, `running` again', body: dataOf(conversationSchema) } },
    errors: ['not_found', 'conflict', 'frozen', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/conversations/:id/cancel', operationId: 'cancelConversation', tag, scope: 'conversations:write',
    summary: 'Cancel a conversation',
    description: 'Kills the running command; every step not finished fails, and the conversation ends `cancelled`. An ended conversation answers 409.',
    params: id,
    responses: { 202: { description: 'Cancelling; the conversation as it is', body: dataOf(conversationSchema) } },
    errors: ['not_found', 'conflict', 'service_unavailable'],
  },
  decision('approve'),
  decision('reject'),
];
