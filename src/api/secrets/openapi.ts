import { z } from 'zod';
import { dataOf, type Operation } from '../openapi/operation';
import { secretBodySchema, secretNameSchema } from './schemas';
import { secretSchema } from './views';

const tag = 'Secrets';
const name = { name: { schema: secretNameSchema, description: 'The secret’s name: letters, digits and underscores' } };

export const secretOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/secrets', operationId: 'listSecrets', tag, scope: 'read',
    summary: 'List the organization’s secrets (names, never values)',
    responses: { 200: { description: 'Every secret, by name', body: dataOf(z.array(secretSchema)) } },
    errors: [],
  },
  {
    method: 'put', path: '/api/v1/secrets/:name', operationId: 'putSecret', tag, scope: 'admin', everywhere: true,
    summary: 'Store a secret',
    description: 'Sealed at rest; every stored value is redacted from all step output of the organization.',
    params: name,
    body: { schema: secretBodySchema, required: true },
    responses: { 200: { description: 'Stored', body: dataOf(secretSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'delete', path: '/api/v1/secrets/:name', operationId: 'deleteSecret', tag, scope: 'admin', everywhere: true,
    summary: 'Delete a secret',
    params: name,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found'],
  },
];
