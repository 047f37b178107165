import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { answered, pipelineRunLink, readPipelineRun } from './bosun-api';
import { id } from './inputs';
import { ACTS, defineTool } from './tool';

/* run_pipeline: triggers a pipeline run as the agent; each stage that changes servers waits for a person. */

export const runPipeline = defineTool({
  name: 'run_pipeline',
  title: 'Run a pipeline',
  description:
    'Triggers a run of the pipeline, as you. You must be allowed to run every stage\'s deployment; freezes, gates and your max_targets_per_run apply to each stage. ' +
    'Because you are an agent, every stage whose deployment changes servers (its commands judged by the command policy, as run_commands\' are) waits for a person\'s approval before it starts, unless it has a gate already: ' +
    '`held_stages` names every stage that waits for a person before it starts. A person approves in the console (console_url); you cannot. Follow it with get_pipeline_run.',
  inputSchema: {
    pipeline_id: id('pipeline id'),
    parameters: z.record(z.string(), z.string()).optional().describe('The pipeline\'s parameters by name (strings)'),
    plan_hash: z.string().regex(/^[0-9a-f]{64}$/).optional().describe('The plan_hash of POST /pipelines/{id}/plan: run only if the plan is still the same'),
  },
  annotations: ACTS,
  run: async ({ pipeline_id, parameters, plan_hash }, context) => {
    const triggered = answered(await context.api.call('POST', `/pipelines/${pipeline_id}/run`, { parameters: parameters ?? {}, ...(plan_hash ? { plan_hash } : {}) }, { 'Idempotency-Key': randomUUID() }));
    const runId = triggered.run_id as string;
    const run = await readPipelineRun(context, pipeline_id, runId);
    const held = (run.stages as Array<{ name: string; gate: unknown }>).filter((stage) => stage.gate).map((stage) => stage.name);
    return { pipeline_id, run_id: runId, status: run.status, held_stages: held, message: triggered.message, console_url: pipelineRunLink(context, pipeline_id, runId) };
  },
});
