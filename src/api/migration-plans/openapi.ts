import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, idParam, locationHeader, type Operation } from '../openapi/operation';
import { createMigrationPlanSchema } from './schemas';
import { migrationPlanListItemSchema, migrationPlanSchema } from './views';

const tag = 'Migration plans';
const id = { id: idParam('migration plan') };

export const migrationPlanOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/migration-plans', operationId: 'listMigrationPlans', tag, scope: 'read',
    summary: 'List migration plans',
    query: pageQuerySchema,
    responses: { 200: { description: 'One page of migration plans', body: pageOf(migrationPlanListItemSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/migration-plans', operationId: 'createMigrationPlan', tag, scope: 'conversations:write',
    summary: 'Create a migration plan',
    description: 'A move from one server of your organization to another (two different servers; one of another organization: 422); conversations about it run on both.',
    body: { schema: createMigrationPlanSchema, required: true },
    responses: { 201: { description: 'Created', body: dataOf(migrationPlanSchema), headers: locationHeader('migration plan') } },
    errors: ['validation_failed'],
    beyondSchema: ['`source_server_id` and `target_server_id` must be two different servers of your organization'],
  },
  {
    method: 'get', path: '/api/v1/migration-plans/:id', operationId: 'getMigrationPlan', tag, scope: 'read',
    summary: 'Read a migration plan, with a summary of both servers',
    params: id,
    responses: { 200: { description: 'The migration plan', body: dataOf(migrationPlanSchema) } },
    errors: ['not_found'],
  },
  {
    method: 'delete', path: '/api/v1/migration-plans/:id', operationId: 'deleteMigrationPlan', tag, scope: 'conversations:write',
    summary: 'Delete a migration plan',
    description: 'Refused (409) while a conversation about it is active; its finished conversations stay readable.',
    params: id,
    responses: { 204: { description: 'Deleted' } },
    errors: ['not_found', 'conflict'],
  },
];
