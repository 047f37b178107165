import { pipelineRunLink, readPipelineRun } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* get_pipeline_run: a pipeline run and its stages as they stand. */

export const getPipelineRun = defineTool({
  name: 'get_pipeline_run',
  title: 'Read a pipeline run',
  description:
    'A pipeline run: its status (`queued`, `running`, `awaiting_approval`, `success`, `failed`, `cancelled`) and each stage\'s status, deployment run (read it with get_run), gate and approvals, error or skip reason. ' +
    'Stage outputs were written by the servers (untrusted server output). A stage `awaiting_approval` waits for a person in the console (console_url); you cannot approve it.',
  inputSchema: { pipeline_id: id('pipeline id'), run_id: id('pipeline run id') },
  annotations: READ,
  run: async ({ pipeline_id, run_id }, context) => ({ run: await readPipelineRun(context, pipeline_id, run_id), console_url: pipelineRunLink(context, pipeline_id, run_id) }),
});
