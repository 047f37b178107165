import { z } from 'zod';
import { actorSchema } from '../access/views';
import { approveSchema, idempotencyKeySchema, rejectSchema } from '../deployments/schemas';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { PIPELINE_RUN_STATUSES, STAGE_STATUSES, STAGE_WHEN } from '../../domain/pipelines/model';
import { TARGET_STATUSES } from '../../domain/deployments/statuses';
import { pipelineTriggerSchema, stageNameSchema } from './run-schemas';

const tag = 'Pipelines';
const id = { id: idParam('pipeline') };
const runIds = { ...id, runId: idParam('pipeline run') };
const stageIds = { ...runIds, stage: { schema: stageNameSchema, description: 'The stage’s name' } };
const idempotencyHeader = { 'Idempotency-Key': { schema: idempotencyKeySchema, description: 'Makes retries safe: the same key returns the same pipeline run' } };
const time = z.string().nullable();

const stageGateSchema = z.object({ approvals: z.number().int(), expires_in: z.string() }).nullable();
const approvalSchema = z
  .object({
    approvals_required: z.number().int(),
    approvals: z.array(z.object({ by: actorSchema.nullable(), at: time, comment: z.string().nullable() })),
    opened_at: time,
    expires_at: time,
    outcome: z.enum(['approved', 'rejected', 'expired']).nullable().describe('null while the gate waits'),
    decided_at: time,
    rejected_by: actorSchema.nullable(),
    reason: z.string().nullable(),
  })
  .nullable()
  .describe('The stage’s gate as it was opened and decided (null until it opened)');

const runStageSchema = z.object({
  name: z.string(),
  status: z.enum(STAGE_STATUSES),
  deployment_id: z.string(),
  deployment_name: z.string(),
  deployment_run_id: z.string().nullable().describe('The deployment run the stage started (GET /deployments/{deployment_id}/runs/{deployment_run_id})'),
  deployment_run_status: z.enum(TARGET_STATUSES).nullable().describe('That run’s own status: queued for its server’s turn, frozen, awaiting its own gate…'),
  needs: z.array(z.string()),
  when: z.enum(STAGE_WHEN),
  gate: stageGateSchema,
  approval: approvalSchema,
  parameters: z.record(z.string(), z.string()).describe('As defined: values with their ${{ … }} expressions'),
  outputs: z.record(z.string(), z.string()).describe('What its run wrote to $BOSUN_OUTPUT (a fleet’s: the values every target gave)'),
  output_conflicts: z.record(z.string(), z.string()).describe('A fleet stage’s outputs its targets disagree on, and who gave what'),
  error: z.string().nullable().describe('Why it failed, or why it was skipped ("needs staging, which failed")'),
  kept_from: z.string().nullable().describe('The pipeline run this stage succeeded in (a retry keeps it, with its outputs)'),
  started_at: time,
  completed_at: time,
});

export const pipelineRunSchema = z
  .object({
    id: z.string(),
    pipeline_id: z.string(),
    pipeline_name: z.string(),
    status: z.enum(PIPELINE_RUN_STATUSES),
    parameters: z.record(z.string(), z.string()).describe('Secret ones masked'),
    triggered_by: z.string(),
    actor: actorSchema.nullable(),
    retry_of: z.string().nullable(),
    plan_hash: z.string().nullable(),
    schedule: z.object({ id: z.string(), name: z.string(), scheduled_at: time }).nullable(),
    created_at: time,
    started_at: time,
    completed_at: time,
    cancel_requested_at: time,
    cancelled_by: actorSchema.nullable(),
    error: z.string().nullable().describe('Names the first failed stage'),
    seq: z.number().int(),
    stages: z.array(runStageSchema),
  })
  .meta({ id: 'PipelineRun' });

const pipelinePlanSchema = z.object({
  plan_hash: z.string().describe('Name it in a trigger’s `plan_hash` to run only what was reviewed'),
  stages: z.array(
    z.object({
      name: z.string(),
      deployment: z.object({ id: z.string(), name: z.string() }),
      needs: z.array(z.string()),
      when: z.enum(STAGE_WHEN),
      gate: stageGateSchema,
      parameters: z.record(z.string(), z.string()),
      deployment_plan_hash: z.string().describe('The stage’s deployment plan as its own POST /plan hashes it (outputs of earlier stages as their expressions)'),
      batches: z.number().int(),
      targets: z.array(z.object({ server_id: z.string(), title: z.string().nullable(), status: z.string() })),
    }),
  ),
});

const triggeredSchema = z.object({ run_id: z.string(), status: z.enum(PIPELINE_RUN_STATUSES), message: z.string() }).meta({ id: 'PipelineRunTriggered' });
const accepted = {
  description: 'Queued (or, for a repeated Idempotency-Key, the pipeline run it created)',
  body: triggeredSchema,
  headers: { ...locationHeader('pipeline run'), 'Idempotent-Replayed': { schema: z.literal('true'), description: 'Present when the Idempotency-Key was seen before' } },
};

export const pipelineRunOperations: Operation[] = [
  {
    method: 'post', path: '/api/v1/pipelines/:id/plan', operationId: 'planPipeline', tag, scope: 'read',
    summary: 'Plan a pipeline run',
    description: 'What a trigger with this body would run now: the graph, and each stage’s deployment plan. Runs nothing; 403 naming a stage whose deployment the caller may not run.',
    params: id,
    body: { schema: pipelineTriggerSchema, required: false },
    responses: { 200: { description: 'The plan', body: dataOf(pipelinePlanSchema) } },
    errors: ['not_found'],
    beyondSchema: ['`parameters` must fit the pipeline’s own'],
  },
  {
    method: 'post', path: '/api/v1/pipelines/:id/run', operationId: 'runPipeline', tag, scope: 'deployments:run',
    summary: 'Trigger a pipeline run',
    description:
      'One durable run of the pipeline’s stages (`pipeline-run-<id>` in Temporal), each a run of its deployment as the caller. Refused (403 naming the stage) unless the caller may run every stage’s deployment; ' +
      '`plan_hash` given and the plan changed since: 409 plan_changed. A change freeze does not refuse it: the stage it covers waits, frozen. ' +
      'An AI agent’s run (through the MCP door, or a service account marked as an agent; retries too) waits for a person before each stage whose deployment changes servers: such a stage without a gate gets one of one approval (docs/agents.md).',
    params: id,
    headers: idempotencyHeader,
    body: { schema: pipelineTriggerSchema, required: false },
    responses: { 202: accepted },
    errors: ['not_found', 'conflict', 'plan_changed', 'service_unavailable'],
    beyondSchema: ['`parameters` must fit the pipeline’s own'],
  },
  {
    method: 'get', path: '/api/v1/pipelines/:id/runs', operationId: 'listPipelineRuns', tag, scope: 'read',
    summary: 'List a pipeline’s runs', description: 'Newest first, paginated.',
    params: id,
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of runs', body: pageOf(pipelineRunSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/pipelines/:id/runs/:runId', operationId: 'getPipelineRun', tag, scope: 'read',
    summary: 'Read a pipeline run, with its stages',
    params: runIds,
    responses: { 200: { description: 'The pipeline run', body: dataOf(pipelineRunSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'post', path: '/api/v1/pipelines/:id/runs/:runId/cancel', operationId: 'cancelPipelineRun', tag, scope: 'deployments:run',
    summary: 'Cancel a pipeline run',
    description: 'A queued run never begins; a running one has its running stages’ runs cancelled and the stages not begun skipped, but `when: always` stages still run. A finished run: 409.',
    params: runIds,
    responses: { 202: { description: 'The run as it is now', body: dataOf(pipelineRunSchema) } },
    errors: ['not_found', 'conflict', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/pipelines/:id/runs/:runId/retry', operationId: 'retryPipelineRun', tag, scope: 'deployments:run',
    summary: 'Retry a pipeline run',
    description: 'A new pipeline run (`retry_of`) that keeps the stages that succeeded, with their outputs, and runs the others. A run still going or that succeeded: 409.',
    params: runIds,
    headers: idempotencyHeader,
    responses: { 202: accepted },
    errors: ['not_found', 'conflict', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/pipelines/:id/runs/:runId/stages/:stage/approve', operationId: 'approvePipelineStage', tag, scope: 'approve',
    summary: 'Approve a stage’s gate',
    description: 'A person with `approve` on every server of the stage’s deployment, never the one who triggered the run, once each (403 self_approval, 409 already_approved); a gate that is not open: 409 not_awaiting_approval or expired.',
    params: stageIds,
    body: { schema: approveSchema, required: false },
    responses: { 200: { description: 'The run as it is now', body: dataOf(pipelineRunSchema) } },
    errors: ['not_found', 'conflict', 'not_awaiting_approval', 'expired', 'already_approved', 'self_approval', 'people_only', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/pipelines/:id/runs/:runId/stages/:stage/reject', operationId: 'rejectPipelineStage', tag, scope: 'approve',
    summary: 'Reject a stage’s gate',
    description: 'The stage fails (its `approval.outcome` rejected, with who and why), and so does the pipeline run; the stages that need it are skipped.',
    params: stageIds,
    body: { schema: rejectSchema, required: true },
    responses: { 200: { description: 'The run as it is now', body: dataOf(pipelineRunSchema) } },
    errors: ['not_found', 'conflict', 'not_awaiting_approval', 'expired', 'people_only', 'service_unavailable'],
  },
];
