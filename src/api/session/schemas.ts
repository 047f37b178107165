import { z } from 'zod';
import { text } from '../http/text';
import { ACTIONS } from '../../domain/access/roles';
import { identityRefSchema } from '../access/views';

export const signInSchema = z.strictObject({
  token: text('token', { min: 1, max: 512 }).describe('An API token, as `bosun tokens create` printed it: exchanged for the session, never stored in the browser'),
});

export const sessionViewSchema = z.object({
  organization: z.string().describe('The slug of the token’s organization'),
  identity: identityRefSchema.describe('The person or service account the session acts for'),
  token_name: z.string(),
  scopes: z.array(z.string()).describe('The token’s scopes'),
  rights: z.array(z.enum(ACTIONS)).describe('What the identity may do somewhere (its roles, narrowed by the token’s scopes; `admin` only when held for the whole organization): the console offers only these'),
  csrf_token: z.string().describe('Sent back in the `X-CSRF-Token` header of every write the session makes; kept in the page’s memory only'),
  idle_seconds: z.number().int().describe('The session ends after this long without a request'),
  expires_at: z.iso.datetime().describe('The session ends then at the latest (never after its token)'),
});
export type SessionView = z.infer<typeof sessionViewSchema>;
