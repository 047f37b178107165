import { z } from 'zod';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { createTokenSchema } from '../tokens/schemas';
import { createdTokenSchema, tokenSchema } from '../tokens/views';
import {
  createPersonSchema,
  createRoleBindingSchema,
  createServiceAccountSchema,
  createTeamSchema,
  roleBindingQuerySchema,
  updatePersonSchema,
  updateRoleBindingSchema,
  updateServiceAccountSchema,
  updateTeamSchema,
} from './schemas';
import { meSchema, personSchema, roleBindingSchema, serviceAccountSchema, teamSchema } from './views';
import { forceQuerySchema } from '../ownership/guard';

const tag = 'People and roles';
const admin = { tag, scope: 'admin' as const, everywhere: true };

/** List, read, create, update and delete of one kind of thing administrators manage. */
function crud(options: {
  path: string;
  one: string;
  id: string;
  schema: z.ZodType;
  create: z.ZodType;
  update: z.ZodType;
  query?: z.ZodObject;
  notes: { create?: string; update?: string; remove?: string; list?: string };
  conflicts: { create?: boolean; update?: boolean; remove?: boolean };
  beyond?: { create?: string[]; update?: string[] };
  /** A kind a Git source may manage: its changes may answer 409 `managed_by_source`, and its DELETE takes `?force=true`. */
  managed?: boolean;
}): Operation[] {
  const { path, one, id, schema } = options;
  return [
    {
      method: 'get', path, operationId: `list${id}s`, ...admin,
      summary: `List the organization’s ${one}s`,
      description: options.notes.list ?? 'Newest first, paginated.',
      query: options.query ? pageQuerySchema.extend(options.query.shape) : pageQuerySchema,
      responses: { 200: { description: `A page of ${one}s`, body: pageOf(schema) } },
      errors: ['validation_failed'],
    },
    {
      method: 'post', path, operationId: `create${id}`, ...admin,
      summary: `Create a ${one}`,
      description: options.notes.create,
      body: { schema: options.create, required: true },
      responses: { 201: { description: 'Created', body: dataOf(schema), headers: locationHeader(one) } },
      errors: [...(options.conflicts.create ? (['conflict'] as const) : []), ...(path.endsWith('role-bindings') ? (['not_found'] as const) : [])],
      beyondSchema: options.beyond?.create,
    },
    {
      method: 'get', path: `${path}/:id`, operationId: `get${id}`, ...admin,
      summary: `Read a ${one}`,
      params: { id: idParam(one) },
      responses: { 200: { description: `The ${one}`, body: dataOf(schema) } },
      errors: ['not_found'],
    },
    {
      method: 'patch', path: `${path}/:id`, operationId: `update${id}`, ...admin,
      summary: `Change a ${one}`,
      description: options.notes.update,
      params: { id: idParam(one) },
      body: { schema: options.update, required: true },
      responses: { 200: { description: `The ${one}, changed`, body: dataOf(schema) } },
      errors: ['not_found', ...(options.conflicts.update ? (['conflict'] as const) : []), ...(options.managed ? (['managed_by_source'] as const) : [])],
      beyondSchema: options.beyond?.update,
    },
    {
      method: 'delete', path: `${path}/:id`, operationId: `delete${id}`, ...admin,
      summary: `Delete a ${one}`,
      description: options.notes.remove,
      params: { id: idParam(one) },
      ...(options.managed ? { query: forceQuerySchema } : {}),
      responses: { 204: { description: 'Deleted' } },
      errors: ['not_found', ...(options.conflicts.remove ? (['conflict'] as const) : []), ...(options.managed ? (['managed_by_source', 'validation_failed'] as const) : [])],
    },
  ];
}

const tokenFor = (path: string, one: string, id: string): Operation => ({
  method: 'post', path: `${path}/:id/tokens`, operationId: `create${id}Token`, ...admin,
  summary: `Create a token for a ${one}`,
  description: 'The answer carries the token itself, this once (`Cache-Control: no-store`). `scopes` narrow what it may do (default `admin`: everything the identity may). A disabled person gets none (409).',
  params: { id: idParam(one) },
  body: { schema: createTokenSchema, required: true },
  responses: { 201: { description: 'Created', body: dataOf(createdTokenSchema) } },
  errors: ['not_found', 'conflict'],
});

const LAST_ADMIN = 'Refused (409) when it would leave the organization with no enabled identity holding `admin` for the whole organization.';

export const accessOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/me', operationId: 'getMe', tag, scope: 'any',
    summary: 'Who you are, and what you may do',
    description: 'The identity behind the token (or console session), its teams, every role binding that gives it rights (its own and its teams’), and the token with its scopes.',
    responses: { 200: { description: 'The caller', body: dataOf(meSchema) } },
    errors: [],
  },
  {
    method: 'get', path: '/api/v1/me/tokens', operationId: 'listMyTokens', tag, scope: 'any',
    summary: 'Your own API tokens (never their values)',
    description: 'The tokens of the identity behind the token (or console session), revoked ones included, oldest first, each with its last use. `current` marks the one making the request. The organization’s whole list is `GET /tokens`, for administrators.',
    responses: { 200: { description: 'Every token of the caller’s identity', body: dataOf(z.array(tokenSchema)) } },
    errors: [],
  },
  ...crud({
    path: '/api/v1/people', one: 'person', id: 'Person', schema: personSchema, create: createPersonSchema, update: updatePersonSchema,
    notes: {
      create: 'A person signs in to the console (with a token, or through the OpenID provider matched by `oidc_subject`) and may decide approvals.',
      update: `\`disabled: true\` stops their sessions and tokens at once (HTTP and open sockets answer 401). Disabling yourself is refused (409). ${LAST_ADMIN}`,
      remove: `Their tokens are revoked and their role bindings and team memberships removed. Deleting yourself is refused (409). ${LAST_ADMIN}`,
    },
    conflicts: { create: true, update: true, remove: true },
  }),
  tokenFor('/api/v1/people', 'person', 'Person'),
  ...crud({
    path: '/api/v1/service-accounts', one: 'service account', id: 'ServiceAccount', schema: serviceAccountSchema, create: createServiceAccountSchema, update: updateServiceAccountSchema, managed: true,
    notes: {
      create: 'A CI pipeline, a script or an agent: it acts with tokens, never signs in to the console and never approves.',
      remove: `Its tokens are revoked and its role bindings removed. ${LAST_ADMIN}`,
    },
    conflicts: { create: true, update: true, remove: true },
  }),
  tokenFor('/api/v1/service-accounts', 'service account', 'ServiceAccount'),
  ...crud({
    path: '/api/v1/teams', one: 'team', id: 'Team', schema: teamSchema, create: createTeamSchema, update: updateTeamSchema, managed: true,
    notes: {
      create: 'People who share role bindings. `oidc_groups`: members of these groups of the OpenID provider join at sign-in.',
      update: `Replacing \`members\` is checked like a removal. ${LAST_ADMIN}`,
      remove: `Its role bindings go with it. ${LAST_ADMIN}`,
    },
    conflicts: { create: true, update: true, remove: true },
    beyond: { create: ['`members` that are not people of the organization'], update: ['`members` that are not people of the organization'] },
  }),
  ...crud({
    path: '/api/v1/role-bindings', one: 'role binding', id: 'RoleBinding', schema: roleBindingSchema, create: createRoleBindingSchema, update: updateRoleBindingSchema, managed: true,
    query: roleBindingQuerySchema,
    notes: {
      list: 'Newest first, paginated; `subject_type` and `subject_id` narrow it to one subject.',
      create:
        'Gives `role` to a person, team or service account: for every server, or for the servers having all of `servers.tags`; for every deployment, or for those in `deployments`; ' +
        'and with `max_targets_per_run`, for runs and conversations touching at most that many servers. A subject of another organization is a 404. ' +
        'Rights are checked when a run is triggered: a binding changed later does not change a run in flight.',
      update: LAST_ADMIN,
      remove: LAST_ADMIN,
    },
    conflicts: { update: true, remove: true },
    beyond: { create: ['`deployments` that are not the organization’s'], update: ['`deployments` that are not the organization’s'] },
  }),
];
