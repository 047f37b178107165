import type { Request } from 'express';

/**
 * The header every call of Bosun's MCP tools carries (the /mcp endpoint's and `bosun mcp`'s), naming
 * the MCP client. It can only tighten what a call may do — its conversations are held as an agent's —
 * so a client that sends it of its own accord gains nothing.
 */
export const AGENT_HEADER = 'x-bosun-agent';

export const cameThroughAgentDoor = (req: Request) => !!req.get(AGENT_HEADER);
