import type { Command } from 'commander';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Fail } from './calls';
import { bosunApiFromEnvironment } from './http';
import { DeployExit } from './exit';

/*
 * `bosun mcp`: Bosun's MCP server for clients that spawn a process (stdio). It is a pipe, not a second
 * implementation: every message goes on to the Bosun at BOSUN_URL (`POST /mcp`, Streamable HTTP) with
 * BOSUN_TOKEN, so the tools, their permissions, limits and audit trail are the server's — the same as
 * an agent connecting over HTTP. stdout carries only MCP messages; anything else goes to stderr.
 */

/** Why the token cannot be an agent's, or null: /mcp takes a service account's token only. */
async function refusal(api: ReturnType<typeof bosunApiFromEnvironment>): Promise<string | null> {
  const me = await api.request('GET', '/me');
  if (me.status === 401) return `BOSUN_TOKEN is refused by ${api.base}: ${(me.body.error as { message?: string } | undefined)?.message ?? 'unauthorized'}`;
  const identity = (me.body.data as { identity?: { type?: string; name?: string } } | undefined)?.identity;
  if (identity?.type !== 'service_account') return `BOSUN_TOKEN belongs to ${identity?.name ?? 'someone'}, a person: an agent uses the token of a service account`;
  return null;
}

export async function serveMcpOverStdio(): Promise<void> {
  const api = bosunApiFromEnvironment();
  const why = await refusal(api);
  if (why) throw new DeployExit(2, why);
  const [{ StdioServerTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(new URL(`${api.base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${api.token}`, 'X-Bosun-Mcp-Transport': 'stdio' } },
  });
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
    remote.onclose = () => resolve();
    // The client closed our stdin: it is done with us.
    process.stdin.once('end', () => resolve());
  });
  // A message Bosun cannot take (it is down, the token was revoked) is answered as an error to its request.
  local.onmessage = (message: JSONRPCMessage) => {
    remote.send(message).catch((error: Error) => {
      process.stderr.write(`bosun mcp: ${error.message}\n`);
      if ('id' in message && 'method' in message) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `Bosun at ${api.base} did not answer: ${error.message}` } });
    });
  };
  remote.onmessage = (message: JSONRPCMessage) => void local.send(message);
  remote.onerror = (error: Error) => process.stderr.write(`bosun mcp: ${error.message}\n`);
  local.onerror = (error: Error) => process.stderr.write(`bosun mcp: ${error.message}\n`);
  await remote.start();
  await local.start();
  await closed;
  await Promise.allSettled([remote.close(), local.close()]);
}

export function mcpCommand(program: Command, fail: Fail): void {
  program
    .command('mcp')
    .description('serve Bosun\'s MCP tools for AI agents over stdio, relaying to the Bosun at BOSUN_URL with BOSUN_TOKEN (a service account\'s); see docs/agents.md')
    .action(async () => {
      try {
        await serveMcpOverStdio();
      } catch (error) {
        if (error instanceof DeployExit) fail(error.code, error.message);
        throw error;
      }
    });
}
