import type { Request } from 'express';
import { AGENT_HEADER } from './agent-door';

/** One answer of Bosun's API: its status and JSON body. */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** What the MCP tools call: Bosun's own HTTP API, as the agent (its token), through the agent door. */
export interface AgentApi {
  call(method: 'GET' | 'POST', path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
}

/**
 * The API of the Bosun that received `req`, called back on the address the request came in on (so a
 * listener bound to one interface is reached on it), with the caller's own bearer token and the agent
 * header. Every tool call thus passes the same authentication, rate limit, permission gate, freezes,
 * tenant rules and audit trail as any other client's request: nothing is checked twice or skipped.
 */
export function loopbackApi(req: Request, token: string, client: string): AgentApi {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  const base = `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}/api/v1`;
  return {
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          [AGENT_HEADER]: client,
          // The agent's address, for the audit trail and the failed-authentication limit (trusted from loopback only).
          ...(req.ip ? { 'X-Forwarded-For': req.ip } : {}),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    },
  };
}
