import { dataOf, type Operation } from '../openapi/operation';
import { sessionViewSchema, signInSchema } from './schemas';

const tag = 'Console session';
const cookie = [{ consoleSession: [] }];

export const sessionOperations: Operation[] = [
  {
    method: 'post', path: '/api/v1/session', operationId: 'signIn', tag, scope: null,
    summary: 'Sign in to the console with an API token',
    description:
      'Exchanges the token for a session in the `bosun_session` cookie (HttpOnly, SameSite=Strict, Secure over TLS). The session acts with the token’s organization and scopes, ends after `SESSION_IDLE_SECONDS` without a request, `SESSION_MAX_SECONDS` after sign-in, and at once when its token is revoked or expires. Every other route then accepts the cookie instead of a bearer token; a write must carry `X-CSRF-Token`.',
    body: { schema: signInSchema, required: true },
    responses: { 201: { description: 'Signed in: the cookie is set', body: dataOf(sessionViewSchema) } },
    errors: ['unauthorized', 'validation_failed', 'rate_limited'],
  },
  {
    method: 'get', path: '/api/v1/session', operationId: 'getSession', tag, scope: null, security: cookie,
    summary: 'The current console session',
    description: 'What a reloaded page needs: the organization, the scopes, and the anti-forgery token.',
    responses: { 200: { description: 'The session', body: dataOf(sessionViewSchema) } },
    errors: ['unauthorized', 'not_found', 'rate_limited'],
  },
  {
    method: 'delete', path: '/api/v1/session', operationId: 'signOut', tag, scope: null, security: cookie,
    summary: 'Sign out',
    description: 'Ends the session for every page using it (their sockets are disconnected) and clears the cookie.',
    responses: { 204: { description: 'Signed out' } },
    errors: ['unauthorized', 'forbidden', 'not_found', 'rate_limited'],
  },
];
