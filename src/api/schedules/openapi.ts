import { z } from 'zod';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { timestampSchema } from '../http/timestamps';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { scheduleQuerySchema, tickQuerySchema } from './routes';
import { createScheduleSchema, pauseScheduleSchema, runNowSchema, updateScheduleSchema } from './schemas';
import { scheduleListedSchema, scheduleSchema, tickSchema } from './views';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'Schedules';
const id = { id: idParam('deployment') };
const ids = { ...id, scheduleId: idParam('schedule') };
const base = '/api/v1/deployments/:id/schedules';
const definitionRules = [
  '`cron` has five fields, each within its range (an error names the field: "field 1 (minute) …")',
  'either `cron` or `every`, not both; `every` at least 1 minute (or the setting SCHEDULE_MIN_INTERVAL_SECONDS)',
  '`time_zone` an IANA name',
  '`catch_up_window` between 10s and 7d; `jitter` at most 1h',
  '`parameters` must fit the deployment’s own',
  '`run_as` a service account of the organization that may run the deployment; another identity than the caller only for an admin',
];

const deploymentScheduleOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/schedules', operationId: 'listAllSchedules', tag, scope: 'read',
    summary: 'List every schedule of the organization',
    description:
      'The schedules of every deployment and pipeline the caller may read, by name, each with the name of the deployment (`deployment_name`) or pipeline (`pipeline_name`) it runs and its next 10 runs (the console’s Schedules page).',
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of schedules', body: pageOf(scheduleListedSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'get', path: base, operationId: 'listSchedules', tag, scope: 'read',
    summary: 'List a deployment’s schedules',
    description: 'By name, each with its next 10 runs.',
    params: id,
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of schedules', body: pageOf(scheduleSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'post', path: base, operationId: 'createSchedule', tag, scope: 'deployments:write',
    summary: 'Schedule a deployment',
    description:
      'A cron expression (five fields) or an interval, in a time zone; the deployment then runs by itself at each tick, as the service account `run_as`, with `parameters`, ' +
      'through the same checks as a trigger (permissions at each tick, freezes, gates). Defaults: `overlap` skip, `catch_up_window` 5m (older missed ticks are recorded as missed, not run), no jitter. ' +
      'A Temporal Schedule `bosun-schedule-<id>` follows the document.',
    params: id,
    body: { schema: createScheduleSchema, required: true },
    responses: { 201: { description: 'Scheduled', body: dataOf(scheduleSchema), headers: locationHeader('schedule') } },
    errors: ['not_found', 'conflict', 'validation_failed'],
    beyondSchema: definitionRules,
  },
  {
    method: 'get', path: `${base}/:scheduleId`, operationId: 'getSchedule', tag, scope: 'read',
    summary: 'Read a schedule, with its next 10 runs',
    description: 'With `from`, the next runs after that time instead of now (Temporal’s own computation): preview a DST change week.',
    params: ids,
    query: scheduleQuerySchema,
    responses: { 200: { description: 'The schedule', body: dataOf(scheduleSchema) } },
    errors: ['not_found', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'patch', path: `${base}/:scheduleId`, operationId: 'updateSchedule', tag, scope: 'deployments:write',
    summary: 'Change a schedule',
    description: 'Any field but `paused` (see pause/unpause); `cron` and `every` replace each other. Last write wins, on the document and on its Temporal Schedule.',
    params: ids,
    body: { schema: updateScheduleSchema, required: true },
    responses: { 200: { description: 'The schedule as changed', body: dataOf(scheduleSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'managed_by_source'],
    beyondSchema: definitionRules,
  },
  {
    method: 'delete', path: `${base}/:scheduleId`, operationId: 'deleteSchedule', tag, scope: 'deployments:write',
    summary: 'Delete a schedule, its ticks and its Temporal Schedule',
    description: 'Runs it started are kept, in the deployment’s history.',
    params: ids,
    query: forceQuerySchema,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'managed_by_source', 'validation_failed'],
  },
  {
    method: 'post', path: `${base}/:scheduleId/pause`, operationId: 'pauseSchedule', tag, scope: 'deployments:write',
    summary: 'Pause a schedule',
    description: 'No tick runs until it is unpaused; ticks due meanwhile are recorded as skipped (`paused`). Records who and why.',
    params: ids,
    body: { schema: pauseScheduleSchema, required: false },
    responses: { 200: { description: 'The schedule, paused', body: dataOf(scheduleSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'post', path: `${base}/:scheduleId/unpause`, operationId: 'unpauseSchedule', tag, scope: 'deployments:write',
    summary: 'Unpause a schedule',
    description: 'Ticks run again from the next due time (those missed while paused are not run).',
    params: ids,
    body: { schema: pauseScheduleSchema, required: false },
    responses: { 200: { description: 'The schedule, running', body: dataOf(scheduleSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
  {
    method: 'post', path: `${base}/:scheduleId/trigger`, operationId: 'triggerSchedule', tag, scope: 'deployments:run',
    summary: 'Run a schedule now',
    description:
      'A tick now, on the same path as the clock’s: the run starts as the schedule’s service account (or the tick records why not). ' +
      'The schedule’s overlap policy (or `overlap` in the body, for this run-now only) applies to its runs still going: `skip` answers 409 `overlap` (recorded as a tick skipped for overlap), ' +
      '`buffer_one` starts it when they end (one run-now waits so at a time; a second is 409 `overlap`), `cancel_other` cancels them first, `allow_all` starts it beside them. ' +
      'Its tick appears in …/ticks with `requested_by`.',
    params: ids,
    body: { schema: runNowSchema, required: false },
    responses: { 202: { description: 'The tick started (or buffered: see `message`)', body: z.object({ scheduled_at: timestampSchema, message: z.string() }) } },
    errors: ['not_found', 'overlap', 'validation_failed', 'service_unavailable'],
  },
  {
    method: 'get', path: `${base}/:scheduleId/ticks`, operationId: 'listScheduleTicks', tag, scope: 'read',
    summary: 'A schedule’s ticks: fired, and skipped with why',
    description: 'Newest due time first. `fired` has its run; a skipped one its reason: missed (Bosun or Temporal down past the catch-up window), overlap, frozen, paused, forbidden, refused.',
    params: ids,
    query: tickQuerySchema,
    responses: { 200: { description: 'One page of ticks', body: pageOf(tickSchema) } },
    errors: ['not_found', 'validation_failed'],
  },
];

/** What a pipeline's schedule says differently: each tick a pipeline run, the checks those of a pipeline trigger (every stage's deployment). */
const PIPELINE_WORDING: Array<[RegExp, string]> = [
  [/a deployment’s schedules/, 'a pipeline’s schedules'],
  [/Schedule a deployment/, 'Schedule a pipeline'],
  [/the deployment then runs by itself at each tick/, 'each tick then starts a pipeline run (`schedule` on the run), as a trigger of the pipeline would'],
  [/the deployment’s own/, 'the pipeline’s own'],
  [/may run the deployment/, 'may run every stage’s deployment'],
  [/in the deployment’s history/, 'in the pipeline’s runs'],
  [/the run starts/, 'the pipeline run starts'],
];
const forPipeline = (text: string) => PIPELINE_WORDING.reduce((said, [from, to]) => said.replace(from, to), text);

/** The same operations on /api/v1/pipelines/:id/schedules: a pipeline's schedules. */
const pipelineScheduleOperations: Operation[] = deploymentScheduleOperations
  .filter((operation) => operation.path.startsWith(base))
  .map((operation) => ({
    ...operation,
    path: operation.path.replace(base, '/api/v1/pipelines/:id/schedules'),
    operationId: operation.operationId.replace(/Schedules?/, (word) => `Pipeline${word}`),
    summary: forPipeline(operation.summary),
    description: operation.description && forPipeline(operation.description),
    params: { ...operation.params, id: idParam('pipeline') },
    ...(operation.beyondSchema ? { beyondSchema: operation.beyondSchema.map(forPipeline) } : {}),
  }));

export const scheduleOperations: Operation[] = [...deploymentScheduleOperations, ...pipelineScheduleOperations];
