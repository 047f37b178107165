import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { answered, readRun, runLink } from './bosun-api';
import { id, parameters } from './inputs';
import { ACTS, defineTool } from './tool';

/* run_deployment: triggers a run as the agent; a gate waits for a person. */

export const runDeployment = defineTool({
  name: 'run_deployment',
  title: 'Run a deployment',
  description:
    'Triggers a run of the deployment, as you. Permissions, freezes, approval gates and your max_targets_per_run apply. Returns the run id and status: `queued`/`running`, or `awaiting_approval` — then a person must approve it in the console (console_url); you cannot. Use wait and get_run to follow it.',
  inputSchema: { deployment_id: id('deployment id'), parameters, plan_hash: z.string().regex(/^[0-9a-f]{64}$/).optional().describe('The plan_hash plan_deployment returned: run only if the plan is still the same') },
  annotations: ACTS,
  run: async ({ deployment_id, parameters: values, plan_hash }, context) => {
    const triggered = answered(await context.api.call('POST', `/deployments/${deployment_id}/run`, { parameters: values ?? {}, ...(plan_hash ? { plan_hash } : {}) }, { 'Idempotency-Key': randomUUID() }));
    const runId = triggered.run_id as string;
    const run = await readRun(context, deployment_id, runId);
    return { deployment_id, run_id: runId, status: run.status, message: triggered.message, console_url: runLink(context, deployment_id, runId) };
  },
});
