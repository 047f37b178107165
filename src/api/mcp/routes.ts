import { Router, type Request } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { recordIntent, recordOutcome } from '../../domain/audit/pending-entries';
import { redactedCommand } from '../../domain/audit/commands';
import { MASK } from '../../domain/deployments/parameters';
import { organizationSecretValues } from '../../domain/secrets/model';
import type { SecretBox } from '../../domain/secrets/secret-box';
import type { Logger } from '../../logger';
import { actorOfRequest } from '../audit/recorder';
import { bearerToken, principalOf } from '../http/auth';
import { assertMayUseAgentDoor } from '../access/gate';
import { loopbackApi } from './loopback';
import { jsonRpc, jsonRpcEnvelope } from './openapi';
import { validate } from '../http/validation';
import { createBosunMcpServer } from './server';

/** The header `bosun mcp` sends: its calls come from a process an MCP client spawned (stdio). */
export const TRANSPORT_HEADER = 'x-bosun-mcp-transport';

export interface McpDeps {
  log: Logger;
  secretBox: SecretBox;
  auditPendingSeconds: number;
  /** PUBLIC_URL: where people open the console; else the address the request came to. */
  publicUrl?: string;
  version: string;
}

/** Tool arguments as the audit trail keeps them: secrets cut out of every text, parameter values masked. */
async function redactedArguments(args: Record<string, unknown>, secrets: () => Promise<string[]>): Promise<Record<string, unknown>> {
  const values = await secrets();
  const redact = (value: unknown, key = ''): unknown => {
    if (key === 'parameters' && value && typeof value === 'object') return Object.fromEntries(Object.keys(value).map((name) => [name, MASK]));
    if (typeof value === 'string') return redactedCommand(value, values);
    if (Array.isArray(value)) return value.map((item) => redact(item));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
    return value;
  };
  return redact(args) as Record<string, unknown>;
}

/**
 * `POST /mcp`: Bosun as a Model Context Protocol server over Streamable HTTP, stateless (each request
 * is answered on its own, as JSON). Behind the API's authentication, rate limits and metrics; for
 * service accounts only (an agent acts as one). Each tool call is written to the audit trail as
 * `mcp.tool_call` with the agent as its actor, before it runs, and completed with its outcome.
 */
export function mcpRoutes({ log, secretBox, auditPendingSeconds, publicUrl, version }: McpDeps): Router {
  const router = Router();
  router.post('/', async (req: Request, res) => {
    const principal = principalOf(req);
    assertMayUseAgentDoor(principal, !!req.headers.authorization);
    // A body that is no JSON-RPC message is refused in the API's envelope, before the SDK sees it.
    validate(jsonRpcEnvelope, req.body);
    validate(jsonRpc, req.body);
    // Streamable HTTP has clients accept JSON and an event stream; this endpoint answers JSON only
    // (stateless), so a client that accepts JSON is served rather than refused with 406.
    if (req.accepts('application/json')) req.headers.accept = 'application/json, text/event-stream';
    const token = bearerToken(req.headers.authorization);
    const transportName = req.get(TRANSPORT_HEADER) === 'stdio' ? 'stdio' : 'http';
    let secrets: Promise<string[]> | undefined;
    const server = createBosunMcpServer(
      {
        api: loopbackApi(req, token, `mcp-${transportName}`),
        consoleBase: publicUrl ?? `${req.protocol}://${req.get('host')}`,
        audit: async <T extends CallToolResult>(tool: string, args: Record<string, unknown>, call: () => Promise<T>) => {
          const entry = await recordIntent(
            {
              organizationId: principal.organizationId,
              actor: actorOfRequest(req),
              sourceAddress: req.ip ?? null,
              action: 'mcp.tool_call',
              target: { kind: 'mcp_tool', id: tool },
              details: { tool, transport: transportName, arguments: await redactedArguments(args, () => (secrets ??= organizationSecretValues(principal.organizationId, secretBox))) },
            },
            auditPendingSeconds,
          );
          const settle = (outcome: string) => recordOutcome(entry, outcome).catch((err: Error) => log.warn({ err: err.message, tool }, 'could not record an MCP tool call’s outcome in the audit trail (it is chained as unknown)'));
          try {
            const result = await call();
            const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
            await settle(result.isError ? (code ?? 'error') : 'ok');
            return result;
          } catch (error) {
            await settle('error');
            throw error;
          }
        },
      },
      version,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return router;
}
