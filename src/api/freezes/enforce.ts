import { Types } from 'mongoose';
import { z } from 'zod';
import { coveringAmong, freezesCovering, freezesOf, type Cover, type FreezableServer } from '../../domain/freezes/coverage';
import type { Freeze } from '../../domain/freezes/model';
import { actorOf, type Principal } from '../../domain/tokens/service';
import { ServerModel } from '../../domain/servers/model';
import { ApiError } from '../http/errors';
import { assertMayOverrideFreeze } from '../access/gate';
import { requiredText } from '../http/text';

/** A trigger's or a retry's override of the freezes that cover its servers: a person with role admin, saying why. */
export const overrideFreezeSchema = z
  .strictObject({ reason: requiredText('reason', 2000) })
  .describe('Run despite the change freezes covering the servers: only a person with role admin (organization-wide); recorded on the run as `freeze_override`');

/** What a run records of an override: who, when, why, and which freezes it went through. */
export interface FreezeOverride {
  by: { type: 'person' | 'service_account'; id: Types.ObjectId; name: string; token_id: Types.ObjectId | null };
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
    `Change freeze ${freezes} covers ${shown}: the ${what} was not started.${what === 'run' ? ' A person with role admin may override it with "override_freeze": {"reason": "…"}' : ''}`,
    undefined,
    {
      freezes: found.map((c) => ({ id: c.freeze._id.toString(), name: c.freeze.name, ends_at: c.window.ends_at.toISOString() })),
      servers: [...servers.values()].map((s) => ({ id: String(s._id), title: serverName(s) })),
    },
  );
}

/**
 * Before anything is stored or started: refuses (409 `frozen`) a run on `servers` while a freeze
 * covers any of them, unless `override` is given by a person allowed to (checked whether or not a
 * freeze covers them now). The override to record on the run, or null when no freeze covered them.
 */
export async function refuseIfFrozen(
  principal: Principal,
  servers: readonly FreezableServer[] | (() => Promise<readonly FreezableServer[]>),
  override?: { reason: string } | null,
  { freezes = freezesOf(principal.organizationId), now = new Date() }: { freezes?: Promise<readonly Freeze[]>; now?: Date } = {},
): Promise<FreezeOverride | null> {
  if (override) assertMayOverrideFreeze(principal);
  const all = await freezes;
  // Most of the time an organization has no freeze at all: then nothing more is looked up.
  if (!all.length) return null;
  const found = coveringAmong(all, typeof servers === 'function' ? await servers() : servers, now);
  if (!found.length) return null;
  if (!override) throw frozenError(found);
  const by = actorOf(principal);
  return { by: { ...by, id: new Types.ObjectId(by.id), token_id: by.token_id ? new Types.ObjectId(by.token_id) : null }, at: now, reason: override.reason, freezes: found.map((c) => c.freeze.name) };
}

/** A conversation (started, or sent another instruction) on these servers (by id): 409 `frozen` while a freeze covers any of them. No override: a conversation waits for the freeze to lift. */
export async function refuseConversationIfFrozen(principal: Principal, serverIds: readonly (Types.ObjectId | null | undefined)[]): Promise<void> {
  const ids = serverIds.filter((id): id is Types.ObjectId => !!id);
  const servers = await ServerModel.find({ _id: { $in: ids }, organization_id: principal.organizationId }, { title: 1, tags: 1 }).lean();
  const found = await freezesCovering(principal.organizationId, servers);
  if (found.length) throw frozenError(found, 'conversation');
}
