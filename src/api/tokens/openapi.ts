import { z } from 'zod';
import { dataOf, idParam, type Operation } from '../openapi/operation';
import { createTokenSchema } from './schemas';
import { createdTokenSchema, tokenSchema } from './views';

const tag = 'Tokens';

export const tokenOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/tokens', operationId: 'listTokens', tag, scope: 'admin',
    summary: 'List the organization’s API tokens (never their values)',
    description: 'Revoked ones included, oldest first, each with its last use (to the minute).',
    responses: { 200: { description: 'Every token of the organization', body: dataOf(z.array(tokenSchema)) } },
    errors: [],
  },
  {
    method: 'post', path: '/api/v1/tokens', operationId: 'createToken', tag, scope: 'admin',
    summary: 'Create an API token',
    description:
      'The answer carries the token itself, this once (`Cache-Control: no-store`); only its SHA-256 is stored. ' +
      'Names are unique among the organization’s active tokens (409).',
    body: { schema: createTokenSchema, required: true },
    responses: { 201: { description: 'Created', body: dataOf(createdTokenSchema) } },
    errors: ['conflict', 'validation_failed'],
  },
  {
    method: 'delete', path: '/api/v1/tokens/:id', operationId: 'revokeToken', tag, scope: 'admin',
    summary: 'Revoke an API token at once',
    description:
      'Its requests, its console sessions and its sockets end at once. Revoking a revoked token changes nothing. ' +
      'Revoking the token making the request is allowed: it is that request’s last.',
    params: { id: idParam('token') },
    responses: { 200: { description: 'The token, revoked', body: dataOf(tokenSchema) } },
    errors: ['not_found'],
  },
];
