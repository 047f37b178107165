import { mayEverywhere } from '../../../domain/access/grants';
import type { Action } from '../../../domain/access/roles';
import type { ConfigKind } from '../../../domain/config/types';
import type { Principal } from '../../../domain/tokens/service';
import { refusal } from './refusals';

/** What changing a kind from Git needs, organization-wide: what its own API's writes need. */
const NEEDED: Record<ConfigKind, Action> = {
  Deployment: 'deployments:write',
  Pipeline: 'deployments:write',
  Schedule: 'deployments:write',
  Freeze: 'admin',
  Team: 'admin',
  ServiceAccount: 'admin',
  RoleBinding: 'admin',
  NotificationChannel: 'admin',
  Policy: 'admin',
};

/**
 * A plan or apply may change (create, update or prune) an object of `kind` only if the caller may do
 * what that kind's routes need for the whole organization: 403 naming the document (`where`) otherwise.
 */
export function assertMayChangeKind(principal: Principal, kind: ConfigKind, where: string): void {
  const action = NEEDED[kind];
  if (!mayEverywhere(principal, action)) refuse(where, kind, action);
}

/** A kind asked for by name that the caller may not export: 403 saying what it needs. */
export function assertMayExportKind(principal: Principal, kind: ConfigKind): void {
  if (!mayReadKind(principal, kind)) throw refusal('forbidden', `exporting ${kind} definitions needs "${readingNeeds(kind)}" for the whole organization`);
}

const readingNeeds = (kind: ConfigKind): Action => (NEEDED[kind] === 'admin' ? 'admin' : 'read');

/** Whether the caller may see every definition of `kind` (the export, the drift list): the same rule as above. */
export const mayReadKind = (principal: Principal, kind: ConfigKind): boolean => mayEverywhere(principal, readingNeeds(kind));

function refuse(where: string, kind: ConfigKind, action: Action): never {
  throw refusal('forbidden', `${where}: changing a ${kind} needs "${action}" for the whole organization`);
}
