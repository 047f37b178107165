import { z } from 'zod';
import { answered, query } from './bosun-api';
import { tags } from './inputs';
import { defineTool, READ } from './tool';

/* list_servers: the servers the agent may see, by tags and status. */

export const listServers = defineTool({
  name: 'list_servers',
  title: 'List servers',
  description: 'Lists the servers you may see, with their id, title, host, tags and status (`unverified`, `verified`, `offline`). Filter by tags (a server must have all of them) and by status.',
  inputSchema: { tags: tags.optional().describe('Only servers having all these tags'), status: z.enum(['unverified', 'verified', 'offline']).optional(), page: z.number().int().min(1).optional() },
  annotations: READ,
  run: async ({ tags: wanted, status, page }, { api }) => {
    const listed = answered(await api.call('GET', `/servers${query({ tag: wanted, status, page, per_page: 100 })}`));
    return { servers: listed.data, meta: listed.meta };
  },
});
