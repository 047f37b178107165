import { z } from 'zod';
import type { Operation } from '../openapi/operation';

/** A JSON-RPC 2.0 message, as the endpoint takes and answers it (its MCP content is the SDK's to check). */
export const jsonRpc = z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string().optional(), id: z.union([z.string(), z.number()]).optional(), params: z.looseObject({}).optional() });

export const mcpOperations: Operation[] = [
  {
    method: 'post', path: '/mcp', operationId: 'callMcp', tag: 'Agents (MCP)', scope: 'any',
    summary: 'The Model Context Protocol endpoint for AI agents',
    description:
      'Bosun as an MCP server over Streamable HTTP (stateless: each request answered as JSON). Only a service account’s bearer token (403 otherwise); the API’s rate limits apply. ' +
      'Tools: list_servers, get_server, list_deployments, plan_deployment, run_deployment, run_commands, ask, get_run, get_conversation, wait, read_log — each a call onto this API as the agent, ' +
      'so its permissions, freezes, gates and policy apply; none approves, edits the policy or manages identities or tokens. Every tool call is in the audit trail (`mcp.tool_call`). See docs/agents.md.',
    body: { schema: jsonRpc.describe('A JSON-RPC 2.0 message of MCP (initialize, tools/list, tools/call, …)'), required: true },
    responses: {
      200: { description: 'The JSON-RPC answer (an MCP error is a JSON-RPC `error` inside it)', body: jsonRpc },
      202: { description: 'A notification or a response, accepted' },
    },
    errors: ['forbidden'],
  },
];
