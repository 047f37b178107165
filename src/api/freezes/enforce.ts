import { mayEverywhere } from '../../domain/access/grants';
import { freezesCovering, type Cover, type FreezableServer } from '../../domain/freezes/coverage';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { ApiError } from '../http/errors';

/** What a run records of an override: who, when, why, and which freezes it went through. */
export interface FreezeOverride {
  by: ReturnType<typeof actorOf>;
  at: Date;
  reason: string;
  freezes: string[];
}

const serverName = (server: FreezableServer) => server.title ?? String(server._id);

/** 409 `frozen`: which freezes cover which of the servers, until when; nothing was started. */
export function frozenError(found: readonly Cover[], what = 'run'): ApiError {
  const servers = new Map<string, FreezableServer>();
  for (const cover of found) for (const server of cover.servers) servers.set(String(server._id), server);
  const freezes = found.map((c) => `${c.freeze.name} (until ${c.window.ends_at.toISOString()})`).join(', ');
  const names = [...servers.values()].map(serverName);
  const shown = names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ');
  return new ApiError(
    'frozen',
    `Change freeze ${freezes} covers ${shown}: the ${what} was not started. A person with role admin may override it with "override_freeze": {"reason": "…"}`,
    undefined,
    {
      freezes: found.map((c) => ({ id: c.freeze._id.toString(), name: c.freeze.name, ends_at: c.window.ends_at.toISOString() })),
      servers: [...servers.values()].map((s) => ({ id: String(s._id), title: serverName(s) })),
    },
  );
}

/** Only a person with role admin for the whole organization overrides a freeze (403 otherwise: `people_only` for a service account). */
function assertMayOverride(principal: Principal): void {
  if (principal.identity.type !== 'person') throw new ApiError('people_only', `Only a person overrides a change freeze: ${principal.identity.name} is a service account`);
  if (!mayEverywhere(principal, 'admin')) throw new ApiError('forbidden', `Overriding a change freeze needs role admin for the whole organization; ${principal.identity.name} has not`);
}

/**
 * Before anything is stored or started: refuses (409 `frozen`) a run on `servers` while a freeze
 * covers any of them, unless `override` is given by a person allowed to (checked whether or not a
 * freeze covers them now). The override to record on the run, or null when no freeze covered them.
 */
export async function refuseIfFrozen(principal: Principal, servers: readonly FreezableServer[], override?: { reason: string } | null, now = new Date()): Promise<FreezeOverride | null> {
  if (override) assertMayOverride(principal);
  const found = await freezesCovering(principal.organizationId, servers, now);
  if (!found.length) return null;
  if (!override) throw frozenError(found);
  return { by: actorOf(principal), at: now, reason: override.reason, freezes: found.map((c) => c.freeze.name) };
}
