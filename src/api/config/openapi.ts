import { z } from 'zod';
import { dataOf, type Operation } from '../openapi/operation';
import { driftedObjectSchema } from './drift';
import { applyRequestSchema, exportQuerySchema, planRequestSchema, planSchema } from './schemas';

const tag = 'Config as code';
const limits = [
  'each file at most 5 MiB (413 naming it), at most 2,000 documents in all',
  'a caller changes a kind only with what its own routes need for the whole organization: `deployments:write` for Deployment, Pipeline and Schedule, `admin` for the rest (403 naming the document)',
];

export const configOperations: Operation[] = [
  {
    method: 'post', path: '/api/v1/config/plan', operationId: 'planConfig', tag, scope: 'deployments:write',
    summary: 'Plan definition files against the organization',
    description:
      'Reads YAML documents `{ kind, name, spec }` and answers what an apply would create, update (each field from and to), delete (with `prune`, only what this `source` applied) and leave unchanged, ' +
      'the objects of this source changed since by another path (`drift`), and every problem of the files at once (`errors`, each `file:line:column: message`). Changes nothing.',
    body: { schema: planRequestSchema, required: true },
    responses: { 200: { description: 'The plan', body: dataOf(planSchema) } },
    errors: ['forbidden', 'payload_too_large', 'validation_failed'],
    beyondSchema: limits,
  },
  {
    method: 'post', path: '/api/v1/config/apply', operationId: 'applyConfig', tag, scope: 'deployments:write',
    summary: 'Apply definition files: all or nothing',
    description:
      'Plans the files again and applies every change in one transaction, each object marked `managed_by` this source (its revision and file); refused whole while the plan has an error (422, each problem as `path: file:line:column`). ' +
      'With `plan_hash`, refused with 409 plan_changed if the plan is not the one reviewed. Applying the same files again changes nothing.',
    body: { schema: applyRequestSchema, required: true },
    responses: {
      200: {
        description: 'Applied',
        body: dataOf(z.strictObject({ created: z.number().int(), updated: z.number().int(), deleted: z.number().int(), plan: planSchema })),
      },
    },
    errors: ['forbidden', 'plan_changed', 'payload_too_large', 'validation_failed'],
    beyondSchema: limits,
  },
  {
    method: 'get', path: '/api/v1/config/export', operationId: 'exportConfig', tag, scope: 'read',
    summary: 'The organization’s definitions as files',
    description:
      'One YAML file per kind (`deployments.yaml`, …), documents by name, in the format apply reads: ids as names, secrets as `${secret:NAME}`, fields in a stable order. ' +
      'Deployments, pipelines and schedules need `read`, the other kinds `admin`, for the whole organization.',
    query: exportQuerySchema,
    responses: { 200: { description: 'The files', body: dataOf(z.strictObject({ files: z.array(z.strictObject({ path: z.string(), content: z.string() })) })) } },
    errors: ['forbidden', 'validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/config/drift', operationId: 'listConfigDrift', tag, scope: 'read',
    summary: 'Definitions changed since by another path',
    description:
      'Every object a source applied that differs now from what it applied: forced with `force: true` (who and when), or its spec changed another way. The next apply of its source puts the file’s version back. ' +
      'Deployments, pipelines and schedules for `read`, the other kinds for `admin`, over the whole organization (kinds the caller may not read whole are left out).',
    responses: { 200: { description: 'The drifted objects, by kind then name', body: dataOf(z.array(driftedObjectSchema)) } },
    errors: [],
  },
  {
    method: 'get', path: '/api/v1/config/schema', operationId: 'getConfigSchema', tag, scope: 'read',
    summary: 'The JSON Schema of definition documents',
    description: 'One `{ kind, name, spec }` shape per kind, each `spec` as files write it (references by name): point an editor’s YAML support at it (`bosun config schema > bosun.schema.json`).',
    responses: { 200: { description: 'A JSON Schema (draft 2020-12)', body: dataOf(z.looseObject({ $schema: z.string(), oneOf: z.array(z.looseObject({})) })) } },
    errors: [],
  },
];
