import { z } from 'zod';

/* Who did a thing, as every resource's views name them: an identity, and an actor (the identity and its token). */

export const identityRefSchema = z
  .object({ type: z.enum(['person', 'service_account']), id: z.string(), name: z.string() })
  .meta({ id: 'IdentityRef', description: 'A person or a service account' });

export const actorSchema = identityRefSchema
  .extend({ token_id: z.string().nullable().describe('The token used (null: a console session without one)') })
  .meta({ id: 'Actor', description: 'Who did it: the identity, and the token it used' });
