import { z } from 'zod';
import { dataOf, idParam, type Operation } from '../openapi/operation';
import { createTokenSchema } from './schemas';
import { createdTokenSchema, tokenSchema } from './views';

const tag = 'Tokens';

export const tokenOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/tokens', operationId: 'listTokens', tag, scope: 'admin', everywhere: true,
    summary: 'List the organization’s API tokens (never their values)',
    description: 'Revoked ones included, oldest first, each with its last use (to the minute).',
    responses: { 200: { description: 'Every token of the organization', body: dataOf(z.array(tokenSchema)) } },
    errors: [],
  },
  {
    method: 'post', path: '/api/v1/tokens', operationId: 'createToken', tag, scope: 'any',
    summary: 'Create an API token for yourself',
    description:
      'A token of the caller’s own identity (an administrator makes one for someone else with `POST /people/{id}/tokens` or `POST /service-accounts/{id}/tokens`). ' +
      'Its `scopes` narrow the identity’s rights (default `admin`: no narrowing) and may not reach past the calling token’s own (403). ' +
      'The answer carries the token itself, this once (`Cache-Control: no-store`); only its SHA-256 is stored. ' +
      'Names are unique among the organization’s active tokens (409).',
    body: { schema: createTokenSchema, required: true },
    responses: { 201: { description: 'Created', body: dataOf(createdTokenSchema) } },
    errors: ['conflict', 'validation_failed'],
  },
  {
    method: 'delete', path: '/api/v1/tokens/:id', operationId: 'revokeToken', tag, scope: 'any',
    summary: 'Revoke an API token at once',
    description:
      'An administrator revokes any token of the organization; anyone else only their own (another’s is a 404). ' +
      'Its requests, its console sessions and its sockets end at once. Revoking a revoked token changes nothing. ' +
      'Revoking the token making the request is allowed: it is that request’s last.',
    params: { id: idParam('token') },
    responses: { 200: { description: 'The token, revoked', body: dataOf(tokenSchema) } },
    errors: ['not_found'],
  },
];
