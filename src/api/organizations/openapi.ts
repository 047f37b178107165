import { dataOf, type Operation } from '../openapi/operation';
import { policySchema, policyViewSchema } from '../../domain/organizations/policy';

const tag = 'Command policy';

export const policyOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/policy', operationId: 'getPolicy', tag, scope: 'read',
    summary: 'Read the organization’s command policy',
    description: 'What conversations may run; the default until an administrator sets one.',
    responses: { 200: { description: 'The policy', body: dataOf(policyViewSchema) } },
    errors: [],
  },
  {
    method: 'put', path: '/api/v1/policy', operationId: 'putPolicy', tag, scope: 'admin', everywhere: true,
    summary: 'Set the organization’s command policy',
    body: { schema: policySchema, required: true },
    responses: { 200: { description: 'The policy as stored', body: dataOf(policyViewSchema) } },
    errors: ['validation_failed'],
  },
];
