import { z } from 'zod';
import { SCOPES } from '../../domain/access/scopes';
import type { toTokenListing } from '../../domain/tokens/service';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import type { IdentityRef } from '../../domain/access/identities';
import { identityRefSchema } from '../access/views';

export const tokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    identity: identityRefSchema.nullable().describe('The person or service account the token acts for'),
    prefix: z.string().describe('The first characters of the token: enough to recognise it, useless to use it'),
    scopes: z.array(z.enum(SCOPES)),
    created_at: timestampSchema,
    last_used_at: timestampSchema.nullable().describe('Kept to the minute'),
    expires_at: timestampSchema.nullable(),
    revoked_at: timestampSchema.nullable(),
    current: z.boolean().describe('Whether this is the token (or the console session’s token) making the request'),
  })
  .meta({ id: 'Token', description: 'An API token; its value is shown once, when it is created, and never again' });

export const createdTokenSchema = tokenSchema
  .extend({ token: z.string().describe('The token itself: shown this once; only its SHA-256 is stored') })
  .meta({ id: 'CreatedToken' });

export const toTokenView = (t: ReturnType<typeof toTokenListing> & { identity: IdentityRef | null }, currentTokenId: string | null): z.infer<typeof tokenSchema> => ({
  id: t.id,
  name: t.name,
  identity: t.identity,
  prefix: t.prefix,
  scopes: t.scopes as z.infer<typeof tokenSchema>['scopes'],
  created_at: iso(t.created_at)!,
  last_used_at: iso(t.last_used_at),
  expires_at: iso(t.expires_at),
  revoked_at: iso(t.revoked_at),
  current: t.id === currentTokenId,
});
