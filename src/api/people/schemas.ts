import { z } from 'zod';
import { ROLES } from '../../domain/access/roles';
import { TOKEN_NAME_PATTERN } from '../../domain/tokens/service';
import { objectIdSchema } from '../http/ids';
import { tagSchema } from '../servers/schemas';
import { forceField } from '../ownership/guard';

/** A person's or a team's name: what the console shows and `triggered_by` reads. */
const displayName = z
  .string()
  .max(64, 'at most 64 characters')
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._@'-]*$/u, 'letters, digits, spaces and . _ @ \' - (starting with a letter or digit)');
const serviceAccountName = z.string().regex(TOKEN_NAME_PATTERN, 'letters, digits, dot, dash and underscore, at most 64, starting with a letter or digit');
// RFC 5321: a local part (before the @) of at most 64 characters, an address of at most 254.
const email = z
  .email('an email address')
  .max(254)
  .refine((address) => address.lastIndexOf('@') <= 64, 'an email address (at most 64 characters before the @)')
  .nullable();
const oidcSubject = z.string().min(1).max(255).nullable().describe('The `sub` claim the OpenID provider gives this person');

export const createPersonSchema = z.strictObject({ name: displayName, email: email.default(null), oidc_subject: oidcSubject.default(null) });
export const updatePersonSchema = z
  .strictObject({ name: displayName.optional(), email: email.optional(), oidc_subject: oidcSubject.optional(), disabled: z.boolean().optional() })
  .refine((v) => Object.keys(v).length > 0, 'at least one field')
  .meta({ minProperties: 1 });

const agentFlag = z.boolean().describe('An AI agent acts as this service account: the conversations it starts hold `change` and `destructive` steps for a person (see the policy)');
export const createServiceAccountSchema = z.strictObject({ name: serviceAccountName, description: z.string().max(500).nullable().default(null), agent: agentFlag.default(false) });
export const updateServiceAccountSchema = z
  .strictObject({ name: serviceAccountName.optional(), description: z.string().max(500).nullable().optional(), agent: agentFlag.optional(), force: forceField })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'at least one field')
  .meta({ minProperties: 1 });

/** A role binding's name (optional; unique in the organization): what a definition kept in Git calls it. */
export const roleBindingName = z.string().regex(TOKEN_NAME_PATTERN, 'letters, digits, dot, dash and underscore, at most 64, starting with a letter or digit');

export const teamMembersField = z.array(z.string().min(1).max(254)).max(1000);
const members = z.array(objectIdSchema).max(1000).transform((ids) => [...new Set(ids)]).describe('Person ids');
export const teamGroups = z.array(z.string().min(1).max(255)).max(100).describe('Groups of the OpenID provider whose people are members at sign-in');
export const createTeamSchema = z.strictObject({ name: displayName, members: members.default([]), oidc_groups: teamGroups.default([]) });
export const updateTeamSchema = z
  .strictObject({ name: displayName.optional(), members: members.optional(), oidc_groups: teamGroups.optional(), force: forceField })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'at least one field')
  .meta({ minProperties: 1 });

export const roleField = z.enum(ROLES, { message: `a role is one of ${ROLES.join(', ')}` });
const subject = z.strictObject({ type: z.enum(['person', 'team', 'service_account']), id: objectIdSchema });
export const bindingServers = z
  .strictObject({ tags: z.array(tagSchema).min(1, 'at least one tag (null: every server)').max(20).transform((tags) => [...new Set(tags)]) })
  .nullable()
  .describe('null: every server of the organization; otherwise the servers having all of these tags');
const deployments = z
  .array(objectIdSchema)
  .min(1, 'at least one deployment (null: every deployment)')
  .max(1000)
  .transform((ids) => [...new Set(ids)])
  .nullable()
  .describe('null: every deployment; otherwise these');
export const maxTargets = z.number().int().min(1).max(100_000).nullable().describe('A run or conversation touching more servers is refused; null: no limit');

export const createRoleBindingSchema = z.strictObject({
  name: roleBindingName.nullable().default(null).describe('Optional, unique in the organization: how a definition kept in Git names the binding'),
  role: roleField,
  subject,
  servers: bindingServers.default(null),
  deployments: deployments.default(null),
  max_targets_per_run: maxTargets.default(null),
});
export const updateRoleBindingSchema = z
  .strictObject({ name: roleBindingName.nullable().optional(), role: roleField.optional(), servers: bindingServers.optional(), deployments: deployments.optional(), max_targets_per_run: maxTargets.optional(), force: forceField })
  .refine((v) => Object.keys(v).some((key) => key !== 'force'), 'at least one field')
  .meta({ minProperties: 1 });
export const roleBindingQuerySchema = z.object({
  subject_type: z.enum(['person', 'team', 'service_account']).optional(),
  subject_id: objectIdSchema.optional(),
});

export type CreateRoleBindingInput = z.infer<typeof createRoleBindingSchema>;
export type UpdateRoleBindingInput = z.infer<typeof updateRoleBindingSchema>;
