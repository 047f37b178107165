import { z } from 'zod';
import { pageOf, pageQuerySchema } from '../http/pagination';
import { dataOf, type Operation } from '../openapi/operation';
import { auditChoicesSchema } from './choices';
import { auditExportQuerySchema, auditQuerySchema, verifyBodySchema } from './schemas';
import { auditPageMetaSchema, checkpointViewSchema, listedEntrySchema, verdictSchema } from './views';

const tag = 'Audit';

export const auditOperations: Operation[] = [
  {
    method: 'get', path: '/api/v1/audit', operationId: 'listAuditEntries', tag, scope: 'audit:read', everywhere: true,
    summary: 'Read the audit trail',
    description:
      'Every change made through Bosun — each write route, each command run over SSH, sign-ins and refused sign-ins, schedules’ ticks — newest first, filtered. ' +
      'A page is reached by a cursor (`before`, `after`: the seqs its neighbours’ `meta` names) or by its number. Each entry comes with what it is about, named as it is now (`subjects`). ' +
      'Role admin or auditor (which reads the trail and nothing else). An unknown query field is refused (422).',
    query: auditQuerySchema,
    responses: { 200: { description: 'One page of entries', body: z.object({ data: z.array(listedEntrySchema), meta: auditPageMetaSchema }) } },
    errors: ['validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/audit/choices', operationId: 'getAuditChoices', tag, scope: 'audit:read', everywhere: true,
    summary: 'What the trail’s filters offer',
    description: 'The organization’s people and service accounts and its servers, by name, and every action the trail records: the console’s filters offer them and send their ids.',
    responses: { 200: { description: 'The choices', body: dataOf(auditChoicesSchema) } },
    errors: [],
  },
  {
    method: 'get', path: '/api/v1/audit/export', operationId: 'exportAuditEntries', tag, scope: 'audit:read', everywhere: true,
    summary: 'Export the audit trail as JSON lines',
    description: 'One entry per line, oldest first, with the same filters as the list; streamed (any size, in constant memory).',
    query: auditExportQuerySchema,
    responses: { 200: { description: 'The entries, one JSON object per line', contentType: 'application/x-ndjson', body: z.string() } },
    errors: ['validation_failed'],
  },
  {
    method: 'get', path: '/api/v1/audit/checkpoints', operationId: 'listAuditCheckpoints', tag, scope: 'audit:read', everywhere: true,
    summary: 'The trail’s checkpoints',
    description: 'Every AUDIT_CHECKPOINT_MINUTES, each organization’s head (seq, hash) is recorded, logged and published as an `audit.checkpoint` notification (when it moved). Keep them elsewhere: `verify` with one proves the trail still holds it. Newest first.',
    query: pageQuerySchema.strict(),
    responses: { 200: { description: 'One page of checkpoints', body: pageOf(checkpointViewSchema) } },
    errors: ['validation_failed'],
  },
  {
    method: 'post', path: '/api/v1/audit/verify', operationId: 'verifyAuditTrail', tag, scope: 'audit:read', everywhere: true,
    summary: 'Verify the audit trail’s hash chain',
    description:
      'Walks the organization’s chain and names the first broken link: an entry changed, deleted from the middle, or a reordered pair. ' +
      'With `checkpoint` (a head published earlier), also proves the trail still holds it: the newest entries deleted are caught there.',
    body: { schema: verifyBodySchema, required: false },
    responses: { 200: { description: 'The verdict', body: verdictSchema } },
    errors: ['validation_failed'],
  },
];
