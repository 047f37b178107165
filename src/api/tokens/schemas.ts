import { z } from 'zod';
import { DURATION_PATTERN } from '../../domain/time/durations';
import { TOKEN_NAME_PATTERN } from '../../domain/tokens/service';
import { SCOPES } from '../../domain/access/scopes';

export const createTokenSchema = z.strictObject({
  name: z.string().regex(TOKEN_NAME_PATTERN, 'a name: letters, digits, dot, dash and underscore, at most 64, starting with a letter or digit'),
  scopes: z
    .array(z.enum(SCOPES, { message: `a scope is one of ${SCOPES.join(', ')}` }))
    .min(1, 'at least one scope')
    .transform((scopes) => [...new Set(scopes)])
    .optional()
    .describe('Narrows the identity’s rights to these (`admin`: no narrowing, the default); never beyond the calling token’s own'),
  expires_in: z
    .string()
    .regex(DURATION_PATTERN, 'a duration: a positive number followed by s, m, h, d or w (e.g. 90d)')
    .nullable()
    .default(null)
    .describe('The token stops working after this long (`30m`, `12h`, `90d`, `2w`); null: never'),
});
export type CreateTokenInput = z.infer<typeof createTokenSchema>;
