import { z } from 'zod';
import { answered, query } from './bosun-api';
import { defineTool, READ } from './tool';

/* list_deployments: the deployment workflows the agent may see. */

export const listDeployments = defineTool({
  name: 'list_deployments',
  title: 'List deployments',
  description: 'Lists the deployment workflows you may see: id, name, targets, parameters, last run and its status.',
  inputSchema: { page: z.number().int().min(1).optional() },
  annotations: READ,
  run: async ({ page }, { api }) => {
    const listed = answered(await api.call('GET', `/deployments${query({ page, per_page: 100 })}`));
    return { deployments: listed.data, meta: listed.meta };
  },
});
