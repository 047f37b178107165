import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { User } from './client';

/*
 * An AI agent as Bosun sees it: a service account with a role binding and a token, connected with
 * the MCP SDK's own client over Streamable HTTP (/mcp) or over stdio (`bosun mcp` as a child process).
 */

// Tool results, as the tests read them.
type Json = any;

const REPO = path.join(__dirname, '..', '..');

export interface AgentOptions {
  role?: string;
  tags?: string[];
  max_targets_per_run?: number;
}

/** A service account with `role` (operator unless said) and a token: the agent's identity. */
export async function agentAccount(admin: User, name: string, { role = 'operator', tags, max_targets_per_run }: AgentOptions = {}): Promise<{ id: string; token: string }> {
  const created = await admin.request('post', '/service-accounts', { name });
  if (created.status !== 201) throw new Error(`add a service account: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.data.id as string;
  const bound = await admin.request('post', '/role-bindings', { role, subject: { type: 'service_account', id }, ...(tags ? { servers: { tags } } : {}), ...(max_targets_per_run ? { max_targets_per_run } : {}) });
  if (bound.status !== 201) throw new Error(`bind a role: ${bound.status} ${JSON.stringify(bound.body)}`);
  const token = await admin.request('post', `/service-accounts/${id}/tokens`, { name: `${name}-token` });
  if (token.status !== 201) throw new Error(`make a token: ${token.status} ${JSON.stringify(token.body)}`);
  return { id, token: token.body.data.token as string };
}

export interface Agent {
  client: Client;
  /** Calls a tool; its structured result (or error), and whether it is an error. */
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; data: Json; text: string }>;
  close(): Promise<void>;
}

function agentOf(client: Client): Agent {
  return {
    client,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
      return { isError: !!result.isError, data: result.structuredContent ?? {}, text };
    },
    close: () => client.close(),
  };
}

/** An MCP client over Streamable HTTP to `url`/mcp with `token`. */
export async function agentOverHttp(url: string, token: string): Promise<Agent> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return agentOf(client);
}

/** An MCP client that spawns `bosun mcp` (stdio), pointed at `url` with `token`; its stderr is kept. */
export async function agentOverStdio(url: string, token: string): Promise<Agent & { stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(REPO, 'src/cli/bin.js'), 'mcp'],
    cwd: REPO,
    env: { ...(process.env as Record<string, string>), BOSUN_URL: url, BOSUN_TOKEN: token, LOG_LEVEL: 'warn' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: 'test-agent-stdio', version: '1.0.0' });
  await client.connect(transport);
  return { ...agentOf(client), stderr: () => stderr };
}
