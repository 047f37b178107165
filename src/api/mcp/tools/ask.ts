import { z } from 'zod';
import { converse, targets } from './converse';
import { where } from './inputs';
import { ACTS, defineTool } from './tool';

/* ask: an instruction in plain English, planned into steps by Bosun's planner. */

export const ask = defineTool({
  name: 'ask',
  title: 'Ask in plain English',
  description:
    'Sends an instruction in plain English ("show disk usage and restart nginx") to a server (or each server having the tags); Bosun\'s planner turns it into shell steps, each judged by the command policy like run_commands. Returns the conversation ids: use wait, then get_conversation.',
  inputSchema: { ...where, instruction: z.string().min(1).max(2000) },
  annotations: ACTS,
  run: async ({ server_id, tags: wanted, instruction }, context) => converse(context, await targets(context, { server_id, tags: wanted }), { message: instruction }),
});
