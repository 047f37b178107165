import { mayEverywhere } from '../../../domain/access/grants';
import type { Principal } from '../../../domain/tokens/service';
import { refusal } from './refusals';

/*
 * The gate's questions about decisions only people take, whatever the roles of a service account
 * (a CI pipeline, a script, an agent): approving or rejecting, overriding a change freeze; and who
 * may force a change to a definition a Git source manages.
 */

function assertPerson(principal: Principal, onlyPeople: string): void {
  if (principal.identity.type !== 'person') throw refusal('people_only', `${onlyPeople}: ${principal.identity.name} is a service account`);
}

/** A fleet run's approval gate is decided by a person (the servers it touches are asked with assertOnRunServers). */
export const assertMayDecideGate = (principal: Principal) => assertPerson(principal, 'Only people approve or reject');

/** A conversation's step that waits for approval is decided by a person, never an agent, not even for its own steps. */
export const assertMayDecideStep = (principal: Principal) => assertPerson(principal, 'Only people approve or reject steps');

/** Only a person with role admin for the whole organization overrides a change freeze (403 otherwise: `people_only` for a service account). */
export function assertMayOverrideFreeze(principal: Principal): void {
  assertPerson(principal, 'Only a person overrides a change freeze');
  if (!mayEverywhere(principal, 'admin')) throw refusal('forbidden', `Overriding a change freeze needs role admin for the whole organization; ${principal.identity.name} has not`);
}

/** Changing a definition a Git source manages, with `force: true`, needs role admin for the whole organization (403 naming it otherwise). */
export function assertMayForceManaged(principal: Principal, what: string): void {
  if (!mayEverywhere(principal, 'admin')) throw refusal('forbidden', `Forcing a change to ${what}, which is managed in Git, needs role admin for the whole organization; ${principal.identity.name} has not`);
}
