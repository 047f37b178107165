import { version } from '../../package.json';
import { conversationOperations } from './conversations/openapi';
import { deploymentOperations } from './deployments/openapi';
import { runFeedOperations } from './deployments/feed-openapi';
import { pipelineOperations } from './pipelines/openapi';
import { pipelineRunOperations } from './pipelines/run-openapi';
import { scheduleOperations } from './schedules/openapi';
import { freezeOperations } from './freezes/openapi';
import { configOperations } from './config/openapi';
import { configSourceOperations } from './config/source-openapi';
import { migrationPlanOperations } from './migration-plans/openapi';
import { notificationOperations } from './notifications/openapi';
import { observabilityOperations } from './observability/openapi';
import { policyOperations } from './organizations/openapi';
import { secretOperations } from './secrets/openapi';
import { tokenOperations } from './tokens/openapi';
import { accessOperations } from './people/openapi';
import { auditOperations } from './audit/openapi';
import { serverOperations } from './servers/openapi';
import { sessionOperations } from './session/openapi';
import { mcpOperations } from './mcp/openapi';
import { buildOpenApiDocument } from './openapi/document';
import { referenceOperations } from './openapi/openapi';
import type { Operation } from './openapi/operation';

/*
 * The API as its OpenAPI document describes it, gathered at the top from each resource's part: the
 * app serves the document (openapi/ builds it from what it is handed) and tells the audit recorder
 * which writes only read.
 */

/** Every route of the app but the reference page's, as the document describes it. */
export const bosunOperations: Operation[] = [
  ...serverOperations,
  ...deploymentOperations,
  ...runFeedOperations,
  ...pipelineOperations,
  ...pipelineRunOperations,
  ...scheduleOperations,
  ...freezeOperations,
  ...configOperations,
  ...configSourceOperations,
  ...secretOperations,
  ...tokenOperations,
  ...accessOperations,
  ...conversationOperations,
  ...migrationPlanOperations,
  ...policyOperations,
  ...notificationOperations,
  ...auditOperations,
  ...sessionOperations,
  ...mcpOperations,
  ...referenceOperations,
  ...observabilityOperations,
];

const DESCRIPTION = `Bosun runs work on your servers over SSH: servers, deployments triggered from CI, and plain-English conversations.

- **Authentication**: every route but this document takes \`Authorization: Bearer <token>\` (or the web console's session cookie, see *Console session*). Every token acts for one identity (a person or a service account) whose **role bindings** say what it may do and on which servers (by tags) and deployments; the token's scopes may narrow that, never widen it. Each route names the action it needs. Anything of another organization, and a server or deployment outside every binding of the caller, is a 404; an action the caller's roles do not allow on what it touches is a 403.
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
      { name: 'Pipelines', description: 'Releases as a graph of stages, each a run of a deployment (docs/pipelines.md)' },
      { name: 'Change freezes', description: 'Windows in which no run starts on the servers they cover' },
      { name: 'Conversations', description: 'Plain-English instructions planned into steps and run on a server' },
      { name: 'Migration plans', description: 'A move between two servers, which conversations can be about' },
      { name: 'Command policy', description: 'What conversations may run' },
      { name: 'Notifications', description: 'Channels (signed webhooks, slack) told of runs, conversations, servers and schedules, durably' },
      { name: 'Secrets', description: 'Values redacted from all step output' },
      { name: 'Tokens', description: 'API tokens: each acts for one person or service account' },
      { name: 'People and roles', description: 'Who may do what, on which servers: people, service accounts, teams and role bindings' },
      { name: 'Console session', description: 'Sign-in for the web console: an API token exchanged for a cookie' },
      { name: 'Agents (MCP)', description: 'The Model Context Protocol endpoint for AI agents, outside /api/v1 (docs/agents.md)' },
      { name: 'Reference', description: 'This document' },
      { name: 'Operations', description: 'Health, readiness and metrics, outside /api/v1' },
    ],
  });
  return built;
}
