import { z } from 'zod';
import { pageOf } from '../http/pagination';
import { dataOf, type Operation } from '../openapi/operation';
import { approvalWaitSchema, feedRunSchema, runFeedQuerySchema } from './run-feed';

/** The organization's runs across deployments, and what waits for the caller: a person's first look. */
export const runFeedOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/runs', operationId: 'listOrganizationRuns', tag: 'Deployments', scope: 'read',
    summary: 'List the organization’s runs, across its deployments',
    description:
      'Newest first, paginated, without step output nor targets: every deployment’s runs the caller may read (a fleet run’s targets and rollbacks are read through their run). ' +
      '`status` narrows to some statuses (`queued,running,awaiting_approval,paused,frozen`: what is in progress), `since` to runs created since a time (`status=failed&since=…`: what failed lately).',
    query: runFeedQuerySchema,
    responses: { 200: { description: 'One page of runs', body: pageOf(feedRunSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/me/approvals', operationId: 'listMyApprovals', tag: 'People and roles', scope: 'any',
    summary: 'The runs waiting for your approval',
    description:
      'Runs waiting at an approval gate that the caller may approve now, the longest waiting first: a person with the `approve` action on every server the run touches, ' +
      'who did not trigger it and has not approved it yet (what `POST …/approve` would refuse is left out). Empty for a service account: only people approve. ' +
      'The console’s “waiting for you” count, kept current by the `RunsChanged` socket event.',
    responses: { 200: { description: 'Every run waiting for the caller’s approval', body: dataOf(z.array(approvalWaitSchema)) } },
    errors: [],
  },
];
