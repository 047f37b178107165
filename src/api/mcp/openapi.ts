import { z } from 'zod';
import { JSONRPCErrorResponseSchema, JSONRPCMessageSchema, JSONRPCResponseSchema, RequestIdSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Operation } from '../openapi/operation';

/**
 * A JSON-RPC 2.0 message as the MCP SDK's transport takes it (the SDK's own shapes: a request, a
 * notification, a result or an error; no other field): the endpoint refuses anything else with a 422,
 * naming the shapes, before the SDK sees it.
 */
export const jsonRpc = z.union(JSONRPCMessageSchema.options, {
  error: 'a JSON-RPC 2.0 request {jsonrpc, id, method, params?}, notification {jsonrpc, method, params?}, result {jsonrpc, id, result} or error {jsonrpc, id, error}, with no other field',
});

/** Checked first, so that what is no JSON-RPC at all is told so by name (`jsonrpc`), not as a union none of whose shapes fit. */
export const jsonRpcEnvelope = z.looseObject({ jsonrpc: z.literal('2.0', 'a JSON-RPC 2.0 message: "jsonrpc": "2.0"') });

/** The transport's own refusal: a JSON-RPC error whose `id` is null (JSON-RPC 2.0: the request's id could not be known). */
const transportError = JSONRPCErrorResponseSchema.extend({ id: RequestIdSchema.nullable().optional() });

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
      200: { description: 'The JSON-RPC answer (an MCP error is a JSON-RPC `error` inside it)', body: JSONRPCResponseSchema },
      202: { description: 'A notification or a response, accepted' },
      400: {
        description: 'A JSON-RPC error from the MCP transport: an `MCP-Protocol-Version` header it does not support, or a message it cannot take',
        body: transportError,
      },
    },
    errors: ['forbidden'],
  },
];
