import type { Request } from 'express';
import { IdentityModel } from '../../domain/access/model';
import type { Principal } from '../../domain/tokens/service';

/**
 * The header every call of Bosun's MCP tools carries (the /mcp endpoint's and `bosun mcp`'s), naming
 * the MCP client. It can only tighten what a call may do — its conversations are held as an agent's —
 * so a client that sends it of its own accord gains nothing.
 */
export const AGENT_HEADER = 'x-bosun-agent';

export const cameThroughAgentDoor = (req: Request) => !!req.get(AGENT_HEADER);

/** Whether an AI agent acts: a service account marked as one, or any service account through the MCP door. */
export const actsAsAgent = async (principal: Principal, viaAgentDoor: boolean) =>
  principal.identity.type === 'service_account' && (viaAgentDoor || !!(await IdentityModel.exists({ _id: principal.identity.id, type: 'service_account', agent: true })));
