import { answered } from './bosun-api';
import { id, parameters } from './inputs';
import { defineTool, READ } from './tool';

/* plan_deployment: what a run would do now, and the plan_hash that pins it. */

export const planDeployment = defineTool({
  name: 'plan_deployment',
  title: 'Plan a deployment run',
  description: 'What a run of the deployment would do now, without running it: its servers, batches, steps, gates and freezes, and its `plan_hash`. Pass that plan_hash to run_deployment to run exactly this plan (it is refused if anything changed).',
  inputSchema: { deployment_id: id('deployment id'), parameters },
  annotations: READ,
  run: async ({ deployment_id, parameters: values }, { api }) => ({ plan: answered(await api.call('POST', `/deployments/${deployment_id}/plan`, { parameters: values ?? {} })).data }),
});
