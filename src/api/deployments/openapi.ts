import { stepLogOperation, stepNumberParam } from '../logs/openapi';
import { z } from 'zod';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { approveSchema, createDeploymentSchema, idempotencyKeySchema, pauseSchema, rejectSchema, retrySchema, rollbackRequestSchema, triggerSchema, updateDeploymentSchema } from './schemas';
import { deploymentListItemSchema, deploymentSchema, planSchema } from './views/deployments';
import { runListItemSchema, runSchema, runTriggeredSchema } from './views/runs';
import { runTargetDetailSchema } from './views/targets';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'Deployments';
const id = { id: idParam('deployment') };
const runIds = { ...id, runId: idParam('run') };
const idempotencyHeader = { 'Idempotency-Key': { schema: idempotencyKeySchema, description: 'Makes retries safe: the same key returns the same run' } };
/** What a definition's route checks beyond its schema. */
const definitionRules = [
  '`server_id` and every `targets.server_ids` must be servers of your organization',
  'parameter names are unique',
  'a parameter’s `pattern` must be a valid regular expression (JavaScript, `u` flag), and its `default` must match it',
];
/** What a trigger's (or a plan's) route checks beyond its schema. */
const parameterRules = ['`parameters` must fit the deployment’s own: each one known, each `required` one given, each value matching its `pattern`'];

const runAccepted = {
  description: 'Queued (or, for a repeated Idempotency-Key, the run it created)',
  body: runTriggeredSchema,
  headers: {
    ...locationHeader('run'),
    'Idempotent-Replayed': { schema: z.literal('true'), description: 'Present when the Idempotency-Key was seen before' },
  },
};

export const deploymentOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/deployments', operationId: 'listDeployments', tag, scope: 'read',
    summary: 'List deployments',
    description: 'Newest first, paginated like servers.',
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of deployments', body: pageOf(deploymentListItemSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/deployments', operationId: 'createDeployment', tag, scope: 'deployments:write',
    summary: 'Define a deployment',
    description:
      'A named list of shell steps on one server (`server_id`) or on many (`targets`: servers listed and servers having all the tags, resolved at each trigger), ' +
      'with an optional `strategy` (batch_size, max_failures) and `parameters`. A server of another organization: 422. Names are unique in the organization (409).',
    body: { schema: createDeploymentSchema, required: true },
    responses: { 201: { description: 'Defined', body: dataOf(deploymentSchema), headers: locationHeader('deployment') } },
    errors: ['conflict', 'validation_failed'],
    beyondSchema: definitionRules,
  },
  {
    method: 'get', path: '/api/v1/deployments/:id', operationId: 'getDeployment', tag, scope: 'read',
    summary: 'Read a deployment, with its steps',
    params: id,
    responses: { 200: { description: 'The deployment', body: dataOf(deploymentSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'patch', path: '/api/v1/deployments/:id', operationId: 'updateDeployment', tag, scope: 'deployments:write',
    summary: 'Change a deployment',
    description: 'Any of `name`, `server_id` or `targets` (one replaces the other), `strategy`, `parameters`, `steps`; runs already triggered keep their steps.',
    params: id,
    body: { schema: updateDeploymentSchema, required: true },
    responses: { 200: { description: 'The deployment as changed', body: dataOf(deploymentSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'managed_by_source'],
    beyondSchema: [...definitionRules, '`strategy` only for a deployment on `targets` (sent with it, or already its own)'],
  },
  {
    method: 'delete', path: '/api/v1/deployments/:id', operationId: 'deleteDeployment', tag, scope: 'deployments:write',
    summary: 'Delete a deployment and its run history',
    description: 'Refused (409) while a run is queued or running, or while a pipeline has a stage that runs it (the 409 names the pipelines).',
    params: id,
    query: forceQuerySchema,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'conflict', 'managed_by_source', 'validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/run', operationId: 'triggerDeployment', tag, scope: 'deployments:run',
    summary: 'Trigger a run',
    description:
      'Answers at once with the queued run, not wrapped in `data`; poll the run (or watch it over Socket.IO). ' +
      'A repeated trigger with the same `Idempotency-Key` returns the same run. A deployment whose server was deleted or never verified answers 409. ' +
      'With `plan_hash` (from POST /plan), a plan changed since (a server tagged, a step edited) answers 409 `plan_changed` with both hashes, and nothing starts. ' +
      'While a change freeze covers any of its servers: 409 `frozen` (the freezes with their ends, the servers), nothing stored or started, unless `override_freeze` is given by a person with role admin ' +
      '(a service account: 403 `people_only`; anyone else: 403), which the run records as `freeze_override`.',
    params: id,
    headers: idempotencyHeader,
    body: { schema: triggerSchema, required: false },
    responses: { 202: runAccepted },
    errors: ['not_found', 'conflict', 'plan_changed', 'frozen', 'people_only', 'validation_failed', 'service_unavailable'],
    beyondSchema: parameterRules,
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/plan', operationId: 'planDeployment', tag, scope: 'read',
    summary: 'What a trigger would run (a dry run)',
    description:
      'Same body as a trigger (`plan_hash` ignored). The resolved targets in their batches, the steps each would run and the environment it would get (secret parameters masked), ' +
      'warnings (targets offline, unverified, or busy; a gate past the last batch), and `plan_hash`, which a trigger passes to run exactly this plan. Runs nothing, stores nothing.',
    params: id,
    body: { schema: triggerSchema, required: false },
    responses: { 200: { description: 'The plan', body: dataOf(planSchema) } },
    errors: ['not_found', 'validation_failed'],
    beyondSchema: parameterRules,
  },
  {
    method: 'get', path: '/api/v1/deployments/:id/runs', operationId: 'listRuns', tag, scope: 'read',
    summary: 'List a deployment’s runs',
    description: 'Newest first, paginated like servers, without step output.',
    params: id,
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of runs', body: pageOf(runListItemSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/deployments/:id/runs/:runId', operationId: 'getRun', tag, scope: 'read',
    summary: 'Read a run, with each step’s output',
    params: runIds,
    responses: { 200: { description: 'The run', body: dataOf(runSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'get', path: '/api/v1/deployments/:id/runs/:runId/targets/:serverId', operationId: 'getRunTarget', tag, scope: 'read',
    summary: 'Read one server of a run, with each step’s output',
    params: { ...runIds, serverId: idParam('server') },
    responses: { 200: { description: 'The target', body: dataOf(runTargetDetailSchema) } },
    errors: ['not_found'],
  },
  stepLogOperation('/api/v1/deployments/:id/runs/:runId/steps/:step/log', 'getRunStepLog', tag, { ...runIds, step: stepNumberParam }),
  stepLogOperation('/api/v1/deployments/:id/runs/:runId/targets/:serverId/steps/:step/log', 'getRunTargetStepLog', tag, { ...runIds, serverId: idParam('server'), step: stepNumberParam }),
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/retry', operationId: 'retryRun', tag, scope: 'deployments:run',
    summary: 'Retry what did not succeed',
    description:
      'A new run (`retry_of`) over the targets of a finished run that did not succeed, each from its first step that did not succeed, with the same steps and parameters. ' +
      'A run still going, or one that succeeded: 409. While a change freeze covers any of the servers it would run on: 409 `frozen`, unless `override_freeze` (as a trigger’s).',
    params: runIds,
    headers: idempotencyHeader,
    body: { schema: retrySchema, required: false },
    responses: { 202: runAccepted },
    errors: ['not_found', 'conflict', 'frozen', 'people_only', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/cancel', operationId: 'cancelRun', tag, scope: 'deployments:run',
    summary: 'Cancel a run',
    description: 'A queued run never starts; a running one has its command’s process group killed on the server. A finished run answers 409.',
    params: runIds,
    responses: { 202: { description: 'Cancelling; the run as it is', body: dataOf(runSchema) } },
    errors: ['not_found', 'conflict', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/approve', operationId: 'approveRun', tag, scope: 'approve',
    summary: 'Approve the gate a run waits at',
    description:
      'One approval of the gate (status `awaiting_approval`); enough distinct people’s approvals and the run goes on. Role `approver` on every target of the run. ' +
      'Only people: a service account answers 403 `people_only`; the person who triggered the run 403 `self_approval`; a second approval by the same person 409 `already_approved`; ' +
      'a run not waiting at a gate 409 `not_awaiting_approval`; after the gate expired 409 `expired`. The approval records the run’s `plan_hash`.',
    params: runIds,
    body: { schema: approveSchema, required: false },
    responses: { 200: { description: 'Recorded; the run as it is', body: dataOf(runSchema) } },
    errors: ['not_found', 'self_approval', 'people_only', 'not_awaiting_approval', 'already_approved', 'expired', 'conflict', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/reject', operationId: 'rejectRun', tag, scope: 'approve',
    summary: 'Reject the gate a run waits at',
    description: 'The run ends `failed` (`error`: who rejected and why); no later batch starts. Role `approver` on every target; people only (the triggerer may reject). Same 409s as approve.',
    params: runIds,
    body: { schema: rejectSchema, required: true },
    responses: { 200: { description: 'Rejected; the run as it is (failing)', body: dataOf(runSchema) } },
    errors: ['not_found', 'people_only', 'not_awaiting_approval', 'expired', 'conflict', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/rollback', operationId: 'rollbackRun', tag, scope: 'deployments:run',
    summary: 'Roll back a failed fleet run',
    description:
      'Runs the rollback steps the run was triggered with on every server it touched (ran a step on), newest batch first, each as a run of its own in its server’s queue, ' +
      'with BOSUN_ROLLBACK_REASON (`reason`, or the run’s error). For a deployment whose `rollback.automatic` is false, or a run that halted before it had one. ' +
      'A run not failed, without rollback steps, rolled back already, or a one-server run: 409. The run’s `rollback` then says how it goes.',
    params: runIds,
    body: { schema: rollbackRequestSchema, required: false },
    responses: { 202: { description: 'Rolling back; the run as it is', body: dataOf(runSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/pause', operationId: 'pauseRun', tag, scope: 'deployments:run',
    summary: 'Pause a fleet run between batches',
    description: 'The running batch finishes; no new batch starts; status `paused` (with `pause`: who and why) until resumed. A run not running, already pausing, or a one-server run: 409.',
    params: runIds,
    body: { schema: pauseSchema, required: true },
    responses: { 200: { description: 'Pausing; the run as it is', body: dataOf(runSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'post', path: '/api/v1/deployments/:id/runs/:runId/resume', operationId: 'resumeRun', tag, scope: 'deployments:run',
    summary: 'Resume a paused fleet run',
    description: 'The next batch starts (a pause asked but not yet held is withdrawn). A run not paused: 409.',
    params: runIds,
    responses: { 200: { description: 'Resumed; the run as it is', body: dataOf(runSchema) } },
    errors: ['not_found', 'conflict', 'service_unavailable'],
  },
];
