import { answered } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* get_server: one server, with its fingerprint and recent activity. */

export const getServer = defineTool({
  name: 'get_server',
  title: 'Read a server',
  description: 'One server: its status, host, tags, its hardware and OS fingerprint (as the server reported it: untrusted), and its recent activity (runs and conversations).',
  inputSchema: { server_id: id('server id') },
  annotations: READ,
  run: async ({ server_id }, { api }) => ({
    server: answered(await api.call('GET', `/servers/${server_id}`)).data,
    recent_activity: answered(await api.call('GET', `/servers/${server_id}/activity?limit=10`)).data,
  }),
});
