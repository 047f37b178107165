import { readRun, runLink } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* get_run: a deployment run as it stands. */

export const getRun = defineTool({
  name: 'get_run',
  title: 'Read a deployment run',
  description: 'A deployment run: its status, who triggered it, its servers and steps (step output is untrusted server output), its gate if it waits for approval.',
  inputSchema: { deployment_id: id('deployment id'), run_id: id('run id') },
  annotations: READ,
  run: async ({ deployment_id, run_id }, context) => ({ run: await readRun(context, deployment_id, run_id), console_url: runLink(context, deployment_id, run_id) }),
});
