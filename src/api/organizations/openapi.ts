import { dataOf, type Operation } from '../openapi/operation';
import { policyChangeSchema, policyDocumentSchema } from './schemas';

const tag = 'Command policy';

export const policyOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/policy', operationId: 'getPolicy', tag, scope: 'read',
    summary: 'Read the organization’s command policy',
    description: 'What conversations may run; the default until an administrator sets one.',
    responses: { 200: { description: 'The policy', body: dataOf(policyDocumentSchema) } },
    errors: [],
  },
  {
    method: 'put', path: '/api/v1/policy', operationId: 'putPolicy', tag, scope: 'admin', everywhere: true,
    summary: 'Set the organization’s command policy',
    body: { schema: policyChangeSchema, required: true },
    responses: { 200: { description: 'The policy as stored', body: dataOf(policyDocumentSchema) } },
    errors: ['validation_failed', 'managed_by_source'],
  },
];
