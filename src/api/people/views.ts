import { z } from 'zod';
import { ROLES } from '../../domain/access/roles';
import type { Identity, RoleBinding, Team } from '../../domain/access/model';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { identityRefSchema } from '../access/views';
import { managedByView, managedByViewSchema } from '../ownership/views';

export const personSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    oidc_subject: z.string().nullable(),
    disabled: z.boolean(),
    disabled_at: timestampSchema.nullable(),
    created_at: timestampSchema,
  })
  .meta({ id: 'Person' });

export const serviceAccountSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string().nullable(), agent: z.boolean().describe('An AI agent acts as it (its conversations hold change and destructive steps for a person)'), managed_by: managedByViewSchema, created_at: timestampSchema })
  .meta({ id: 'ServiceAccount', description: 'A CI pipeline, a script or an agent: acts with tokens, never signs in or approves' });

export const teamSchema = z
  .object({ id: z.string(), name: z.string(), members: z.array(z.string()), oidc_groups: z.array(z.string()), managed_by: managedByViewSchema, created_at: timestampSchema })
  .meta({ id: 'Team' });

export const roleBindingSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable().describe('Its name, unique in the organization; null when it has none'),
    role: z.enum(ROLES),
    subject: z.object({ type: z.enum(['person', 'team', 'service_account']), id: z.string() }),
    servers: z.object({ tags: z.array(z.string()) }).nullable(),
    deployments: z.array(z.string()).nullable(),
    max_targets_per_run: z.number().int().nullable(),
    managed_by: managedByViewSchema,
    created_at: timestampSchema,
  })
  .meta({ id: 'RoleBinding', description: 'A role given to a person, team or service account, organization-wide or limited' });

export const meSchema = z
  .object({
    identity: identityRefSchema,
    teams: z.array(z.object({ id: z.string(), name: z.string() })),
    bindings: z.array(roleBindingSchema).describe('The identity’s own and its teams’'),
    token: z.object({ id: z.string(), name: z.string(), scopes: z.array(z.string()) }).nullable(),
  })
  .meta({ id: 'Me', description: 'Who the caller is and what it may do' });

export const toPersonView = (p: Identity): z.infer<typeof personSchema> => ({
  id: p._id.toString(),
  name: p.name,
  email: p.email ?? null,
  oidc_subject: p.oidc_subject ?? null,
  disabled: !!p.disabled_at,
  disabled_at: iso(p.disabled_at),
  created_at: iso(p.createdAt)!,
});

export const toServiceAccountView = (a: Identity): z.infer<typeof serviceAccountSchema> => ({
  id: a._id.toString(),
  name: a.name,
  description: a.description ?? null,
  agent: a.agent ?? false,
  managed_by: managedByView(a.managed_by),
  created_at: iso(a.createdAt)!,
});

export const toTeamView = (t: Team): z.infer<typeof teamSchema> => ({
  id: t._id.toString(),
  name: t.name,
  members: t.members.map(String),
  oidc_groups: t.oidc_groups,
  managed_by: managedByView(t.managed_by),
  created_at: iso(t.createdAt)!,
});

export const toRoleBindingView = (b: RoleBinding): z.infer<typeof roleBindingSchema> => ({
  id: b._id.toString(),
  name: b.name ?? null,
  role: b.role as z.infer<typeof roleBindingSchema>['role'],
  subject: { type: b.subject.type as 'person', id: b.subject.id.toString() },
  servers: b.server_tags ? { tags: b.server_tags } : null,
  deployments: b.deployments ? b.deployments.map(String) : null,
  max_targets_per_run: b.max_targets_per_run ?? null,
  managed_by: managedByView(b.managed_by),
  created_at: iso(b.createdAt)!,
});
