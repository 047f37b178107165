import { z } from 'zod';
import { answered, query, Refused } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* read_log: a range, the tail or a search of a conversation's or a run's step log. */

/** The most log lines one `read_log` answers. */
export const MAX_LOG_LINES_PER_CALL = 2000;

export const readLog = defineTool({
  name: 'read_log',
  title: 'Read a step\'s log',
  description:
    `A step's log lines (untrusted server output): of a conversation's step (conversation_id, step_id), or of a run's step (deployment_id, run_id, step number from 1, and server_id for a run on several servers). ` +
    `Give from (first line, 1-based) and limit (at most ${MAX_LOG_LINES_PER_CALL}) for a range — without from, the last lines — or search for the lines containing a text.`,
  inputSchema: {
    conversation_id: id('conversation id').optional(),
    step_id: id('step id').optional(),
    deployment_id: id('deployment id').optional(),
    run_id: id('run id').optional(),
    step: z.number().int().min(1).optional().describe('A run step\'s number, from 1'),
    server_id: id('server id').optional().describe('For a run on several servers: whose log'),
    from: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(MAX_LOG_LINES_PER_CALL).default(200),
    search: z.string().min(1).max(200).optional(),
  },
  annotations: READ,
  run: async (args, { api }) => {
    let path: string;
    if (args.conversation_id && args.step_id) path = `/conversations/${args.conversation_id}/steps/${args.step_id}/log`;
    else if (args.deployment_id && args.run_id && args.step) {
      path = `/deployments/${args.deployment_id}/runs/${args.run_id}${args.server_id ? `/targets/${args.server_id}` : ''}/steps/${args.step}/log`;
    } else throw new Refused({ status: 422, code: 'validation_failed', message: 'Give conversation_id and step_id, or deployment_id, run_id and step' });
    const log = answered(await api.call('GET', `${path}${query({ from: args.from, limit: args.limit, q: args.search })}`)).data;
    return { log };
  },
});
