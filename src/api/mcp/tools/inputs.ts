import { z } from 'zod';

/* The pieces of input schemas several tools share. */

export const id = (what: string) => z.string().regex(/^[0-9a-f]{24}$/i, `${what} is a 24-character hexadecimal id`).describe(`The ${what}`);

export const tags = z.array(z.string().min(1).max(63)).min(1).max(20);

export const parameters = z.record(z.string(), z.string()).optional().describe('The deployment\'s parameters by name (strings)');

/** Where run_commands and ask go: one server, or every server having the tags. */
export const where = {
  server_id: id('server id').optional().describe('The one server to run on (or give tags)'),
  tags: tags.optional().describe('Every server having all these tags (within your max_targets_per_run); one conversation each'),
};
