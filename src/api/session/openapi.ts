import { dataOf, type Operation } from '../openapi/operation';
import { z } from 'zod';
import { providersViewSchema, sessionViewSchema, SIGN_IN_FAILURES, signInSchema } from './schemas';

const tag = 'Console session';
const cookie = [{ consoleSession: [] }];

const location = (where: string) => ({ Location: { schema: z.string(), description: where, required: true } });

export const sessionOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/session/providers', operationId: 'getSignInProviders', tag, scope: null,
    summary: 'How one may sign in to the console',
    description: 'Always with an API token; and through the OpenID Connect provider when one is configured (`OIDC_ISSUER_URL`), with whether it can be reached just now, so the sign-in page can say so.',
    responses: { 200: { description: 'The ways to sign in', body: dataOf(providersViewSchema) } },
    errors: ['rate_limited'],
  },
  {
    method: 'get', path: '/api/v1/session/oidc', operationId: 'beginOidcSignIn', tag, scope: null,
    summary: 'Sign in to the console through the OpenID Connect provider',
    description:
      'A browser navigation: redirects to the provider’s authorization endpoint (authorization code flow with PKCE S256, a state and a nonce, kept server-side for ten minutes behind the HttpOnly `bosun_oidc` cookie). Without a provider, or with one that cannot be reached, redirects back to `/sign-in?sso=not_configured|unreachable`.',
    responses: { 303: { description: 'To the provider (or back to the sign-in page)', headers: location('The provider’s authorization URL, or `/sign-in?sso=…`') } },
    errors: ['rate_limited'],
  },
  {
    method: 'get', path: '/api/v1/session/oidc/callback', operationId: 'finishOidcSignIn', tag, scope: null,
    summary: 'The provider’s redirect back after sign-in',
    description: `Checks the answer with openid-client (state, nonce, PKCE, the ID token’s issuer, audience, signature and times), finds the person by the issuer’s \`sub\` (created on a first sign-in only with \`OIDC_CREATE_PEOPLE\`), puts them in the teams whose \`oidc_groups\` are among their groups (\`OIDC_GROUPS_CLAIM\`) and out of the other mapped teams, opens a session (the \`bosun_session\` cookie) and redirects to the console. Any failure redirects to \`/sign-in?sso=<why>\`, one of: ${SIGN_IN_FAILURES.map((f) => `\`${f}\``).join(', ')}.`,
    query: z.object({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() }),
    responses: { 303: { description: 'Signed in: to the console; or to the sign-in page saying why not', headers: location('`/`, or `/sign-in?sso=…`') } },
    errors: ['rate_limited'],
  },
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
