import { z } from 'zod';
import { converse, targets } from './converse';
import { where } from './inputs';
import { ACTS, defineTool } from './tool';

/* run_commands: shell commands as given, one step each, judged by the command policy. */

export const runCommands = defineTool({
  name: 'run_commands',
  title: 'Run shell commands',
  description:
    'Runs these shell commands, in order, on a server (or on each server having the tags): one conversation per server, one step per command. ' +
    'Each command is classified by the organization\'s command policy: `read` commands run at once; `change` and `destructive` ones wait for a person\'s approval (or are refused). ' +
    'Say why in `reason` (people approving read it). Returns the conversation ids: use wait, then get_conversation and read_log.',
  inputSchema: { ...where, commands: z.array(z.string().min(1).max(2000)).min(1).max(30).describe('Shell commands, run by sh as the server\'s login'), reason: z.string().min(1).max(2000).describe('Why, for the people who approve') },
  annotations: ACTS,
  run: async ({ server_id, tags: wanted, commands, reason }, context) => converse(context, await targets(context, { server_id, tags: wanted }), { message: reason, commands }),
});
