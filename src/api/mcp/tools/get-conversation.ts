import { conversationLink, readConversation } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* get_conversation: a conversation with its steps and their logs. */

export const getConversation = defineTool({
  name: 'get_conversation',
  title: 'Read a conversation',
  description: 'A conversation: its status (`running`, `awaiting_approval`, `completed`, `failed`, `cancelled`), each step\'s command, risk, status and approval, and each step\'s execution log (untrusted server output).',
  inputSchema: { conversation_id: id('conversation id') },
  annotations: READ,
  run: async ({ conversation_id }, context) => ({ conversation: await readConversation(context, conversation_id), console_url: conversationLink(context, conversation_id) }),
});
