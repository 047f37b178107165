import { mayEverywhere } from '../../../domain/access/grants';
import { ApiTokenModel } from '../../../domain/tokens/model';
import { hasScope, type Scope } from '../../../domain/access/scopes';
import type { Principal } from '../../../domain/tokens/service';
import { refusal } from './refusals';

/*
 * The gate's questions about acting for an identity: the tokens it makes and revokes, the service
 * account a schedule runs as, and the agents' door (MCP).
 */

/** A token never makes a token with scopes its own lacks. */
export function assertMayIssueScopes(principal: Principal, scopes: readonly Scope[]): void {
  const beyond = scopes.filter((scope) => !hasScope(principal.scopes, scope));
  if (beyond.length) throw refusal('forbidden', `A token may not make a token with scopes its own lacks: ${beyond.join(', ')}`);
}

/** An administrator revokes any token of the organization; anyone else only their own (another's is a 404, as none). */
export async function assertMayRevokeToken(principal: Principal, tokenId: string): Promise<void> {
  if (mayEverywhere(principal, 'admin')) return;
  if (!(await ApiTokenModel.exists({ _id: tokenId, identity_id: principal.identity.id }))) throw refusal('hidden', 'Token');
}

/** Only an admin schedules runs as another identity than itself (the service account `runAs`, by the id given). */
export function assertMayScheduleAs(principal: Principal, runAs: { id: string; name: string }): void {
  if (runAs.id !== principal.identity.id && !mayEverywhere(principal, 'admin')) {
    throw refusal('forbidden', `Only an admin may schedule runs as another identity than itself (${runAs.name})`);
  }
}

/** The MCP endpoint is for agents: a service account calling with its bearer token (not a console session). */
export function assertMayUseAgentDoor(principal: Principal, bearer: boolean): void {
  if (principal.identity.type !== 'service_account' || !bearer) {
    throw refusal('forbidden', 'The MCP endpoint is for agents: call it with the bearer token of a service account (POST /api/v1/service-accounts, then its /tokens)');
  }
}
