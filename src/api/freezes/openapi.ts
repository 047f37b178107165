import { z } from 'zod';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { createFreezeSchema, freezeRangeSchema, updateFreezeSchema } from './schemas';
import { freezeViewSchema } from './views';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'Change freezes';
const id = { id: idParam('freeze') };
/** What a freeze's write checks beyond its schema. */
const windowRules = [
  'one kind of window: `starts_at` and `ends_at` (one-off), or `cron` and `duration` (recurring), never both, never neither (a change may switch kinds by sending the other kind’s fields)',
  '`ends_at` after `starts_at`',
  '`cron` a valid five-field expression (the error names the field)',
  '`time_zone` an IANA time zone, required with `cron`',
  '`duration` at most 31d',
];

export const freezeOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/freezes', operationId: 'listFreezes', tag, scope: 'read',
    summary: 'List the organization’s change freezes',
    description: 'By name, each with whether it is active now and its current or next window; with `from` and `to` (at most 31 days apart), each with its `windows` in that range.',
    query: freezeRangeSchema,
    responses: { 200: { description: 'Every freeze', body: dataOf(z.array(freezeViewSchema)) } },
    errors: ['validation_failed'],
    beyondSchema: ['`from` and `to` together, `to` after `from`, at most 31 days later'],
  },
  {
    method: 'post', path: '/api/v1/freezes', operationId: 'createFreeze', tag, scope: 'admin', everywhere: true,
    summary: 'Declare a change freeze',
    description:
      'While a window is open, no run starts on the servers it covers (`tags`: those having one of them; null: all): a trigger, a retry, a scheduled tick or a conversation answers 409 `frozen`, ' +
      'and a fleet run already running holds between batches (status `frozen`) until it lifts. Names are unique in the organization (409).',
    body: { schema: createFreezeSchema, required: true },
    responses: { 201: { description: 'Declared', body: dataOf(freezeViewSchema), headers: locationHeader('freeze') } },
    errors: ['conflict', 'validation_failed'],
    beyondSchema: windowRules,
  },
  {
    method: 'get', path: '/api/v1/freezes/:id', operationId: 'getFreeze', tag, scope: 'read',
    summary: 'Read a change freeze',
    params: id,
    responses: { 200: { description: 'The freeze', body: dataOf(freezeViewSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'patch', path: '/api/v1/freezes/:id', operationId: 'updateFreeze', tag, scope: 'admin', everywhere: true,
    summary: 'Change a freeze (end it early, extend it, re-tag it)',
    description: 'The freeze as changed is checked whole; runs it holds check again at once.',
    params: id,
    body: { schema: updateFreezeSchema, required: true },
    responses: { 200: { description: 'The freeze as changed', body: dataOf(freezeViewSchema) } },
    errors: ['not_found', 'conflict', 'validation_failed', 'managed_by_source'],
    beyondSchema: windowRules,
  },
  {
    method: 'delete', path: '/api/v1/freezes/:id', operationId: 'deleteFreeze', tag, scope: 'admin', everywhere: true,
    summary: 'Delete a freeze',
    description: 'Runs it held check again at once and go on unless another freeze covers them.',
    params: id,
    query: forceQuerySchema,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'managed_by_source', 'validation_failed'],
  },
];
