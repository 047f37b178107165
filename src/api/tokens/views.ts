import { z } from 'zod';
import { SCOPES } from '../../domain/access/scopes';
import { ROLES } from '../../domain/access/roles';
import { tokensRights, type TokenRights } from '../access/gate';
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
    can: z
      .object({
        actions: z.array(z.enum(SCOPES)).describe('The actions it may take somewhere (admin and audit:read count only organization-wide)'),
        bindings: z
          .array(
            z.object({
              role: z.enum(ROLES),
              actions: z.array(z.enum(SCOPES)).describe('The role’s actions its scopes leave'),
              servers: z.object({ tags: z.array(z.string()) }).nullable().describe('Only servers with all these tags; null: every server'),
              deployments: z.array(z.string()).nullable().describe('Only these deployments; null: every deployment'),
              max_targets_per_run: z.number().int().nullable(),
            }),
          )
          .describe('The identity’s role bindings (its own and its teams’) the token may use, each narrowed to its scopes'),
      })
      .describe('What the token can do now: its identity’s roles narrowed by its scopes, by the gate’s own rules (a scope beyond the roles gives nothing). Nothing once revoked or expired'),
  })
  .meta({ id: 'Token', description: 'An API token; its value is shown once, when it is created, and never again' });

export const createdTokenSchema = tokenSchema
  .extend({ token: z.string().describe('The token itself: shown this once; only its SHA-256 is stored') })
  .meta({ id: 'CreatedToken' });

type Listed = ReturnType<typeof toTokenListing> & { identity: IdentityRef | null };

export const toTokenView = (t: Listed, currentTokenId: string | null, can: TokenRights): z.infer<typeof tokenSchema> => ({
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
  can,
});

/** Tokens' views, each with what it can do (its identity's grants read once per identity). */
export async function toTokenViews(tokens: Listed[], currentTokenId: string | null) {
  const rights = await tokensRights(tokens);
  return tokens.map((t, i) => toTokenView(t, currentTokenId, rights[i]!));
}
