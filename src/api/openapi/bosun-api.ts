import { z } from 'zod';
import { version } from '../../../package.json';
import { conversationOperations } from '../conversations/openapi';
import { deploymentOperations } from '../deployments/openapi';
import { migrationPlanOperations } from '../migration-plans/openapi';
import { observabilityOperations } from '../observability/openapi';
import { policyOperations } from '../organizations/openapi';
import { secretOperations } from '../secrets/openapi';
import { tokenOperations } from '../tokens/openapi';
import { serverOperations } from '../servers/openapi';
import { sessionOperations } from '../session/openapi';
import { buildOpenApiDocument } from './document';
import type { Operation } from './operation';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const documentOperation: Operation = {
  method: 'get', path: OPENAPI_PATH, operationId: 'getOpenApiDocument', tag: 'Reference', scope: null,
  summary: 'This document',
  description: 'The OpenAPI 3.1 document of the API, generated from the schemas the routes validate with. The reference page at `/docs` renders it.',
  responses: { 200: { description: 'The OpenAPI document', body: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }) } },
  errors: [],
};

/** Every route of the app but the reference page's, as the document describes it. */
export const bosunOperations: Operation[] = [
  ...serverOperations,
  ...deploymentOperations,
  ...secretOperations,
  ...tokenOperations,
  ...conversationOperations,
  ...migrationPlanOperations,
  ...policyOperations,
  ...sessionOperations,
  documentOperation,
  ...observabilityOperations,
];

const DESCRIPTION = `Bosun runs work on your servers over SSH: servers, deployments triggered from CI, and plain-English conversations.

- **Authentication**: every route but this document takes \`Authorization: Bearer <token>\` (or the web console's session cookie, see *Console session*); each names the scope it needs (\`admin\` holds every scope). A token sees only its organization's data: anything else is a 404.
- **Envelopes**: a resource or a list comes in \`data\`; lists add \`meta\` (\`current_page\`, \`per_page\`, \`total\`, \`last_page\`), paginated with \`page\` (from 1) and \`per_page\` (1–100, default 12), newest first. The trigger's 202 is the one answer not wrapped in \`data\`.
- **Errors**: one envelope, \`{"error": {"code", "message", "details"?}}\`; a request that fails changes nothing.
- **Bodies**: JSON with \`Content-Type: application/json\`; unknown fields are refused (422).
- **Live progress**: Socket.IO on the same port (path \`/socket.io\`), described in docs/events.md.`;

let built: ReturnType<typeof buildOpenApiDocument> | undefined;

/** The document, built once per process from the operations above. */
export function openApiDocument() {
  built ??= buildOpenApiDocument(bosunOperations, {
    title: 'Bosun API',
    version,
    description: DESCRIPTION,
    tags: [
      { name: 'Servers', description: 'The servers Bosun reaches over SSH: verified, fingerprinted, watched' },
      { name: 'Deployments', description: 'Named lists of shell steps on a server, triggered from CI; their runs' },
      { name: 'Conversations', description: 'Plain-English instructions planned into steps and run on a server' },
      { name: 'Migration plans', description: 'A move between two servers, which conversations can be about' },
      { name: 'Command policy', description: 'What conversations may run' },
      { name: 'Secrets', description: 'Values redacted from all step output' },
      { name: 'Console session', description: 'Sign-in for the web console: an API token exchanged for a cookie' },
      { name: 'Reference', description: 'This document' },
      { name: 'Operations', description: 'Health, readiness and metrics, outside /api/v1' },
    ],
  });
  return built;
}
