import { z } from 'zod';
import { answered, query } from './bosun-api';
import { defineTool, READ } from './tool';

/* list_pipelines: the pipelines the agent may see. */

export const listPipelines = defineTool({
  name: 'list_pipelines',
  title: 'List pipelines',
  description: 'Lists the pipelines you may see (those whose every stage\'s deployment you may read): id, name, parameters, and stages — each with its deployment, the stages it needs, when it runs, and its gate.',
  inputSchema: { page: z.number().int().min(1).optional() },
  annotations: READ,
  run: async ({ page }, { api }) => {
    const listed = answered(await api.call('GET', `/pipelines${query({ page, per_page: 100 })}`));
    return { pipelines: listed.data, meta: listed.meta };
  },
});
