import type { Types } from 'mongoose';
import { coveringAmong, freezesOf, liftsAt, type FreezableServer } from '../freezes/coverage';
import { ServerModel } from '../servers/model';
import type { FrozenHold } from '../contracts/runs';
import type { DeploymentRun } from './model';
import * as gates from './gates';

/** What a run's freeze hold reads of it. */
export type HoldableRun = Pick<DeploymentRun, '_id' | 'organization_id' | 'status' | 'freeze_override'> &
  Partial<Pick<DeploymentRun, 'server_id' | 'parent_run_id' | 'rolls_back'>>;

/**
 * Change freezes covering `servers` hold a begun run (running → frozen, with their names and when
 * they lift); a frozen run they no longer cover goes on (frozen → running). What holds it, or null.
 * A run triggered through freezes by a person's override is never held. While the organization has
 * no freeze, nothing more is read.
 */
export async function holdOrThaw(run: HoldableRun | null, servers: () => Promise<FreezableServer[]>): Promise<FrozenHold | null> {
  if (!run || run.freeze_override) return null;
  const freezes = await freezesOf(run.organization_id);
  const found = freezes.length ? coveringAmong(freezes, await servers()) : [];
  const runId = String(run._id);
  if (!found.length) {
    if (run.status === 'frozen') await gates.thawRun(runId);
    return null;
  }
  const names = found.map((c) => c.freeze.name);
  const until = liftsAt(found);
  return (await gates.holdFrozen(runId, names, until)) ? { names, until: until.getTime() } : null;
}

/**
 * A one-server run as it begins (or checks again while held): its server's freezes hold it. A fleet's
 * target is held by its fleet run, between batches; a rollback run undoes a halted run's change and is
 * never held (a freeze must not keep a half-made change in place).
 */
export function holdOneServerRun(run: HoldableRun | null): Promise<FrozenHold | null> {
  if (!run || run.parent_run_id || run.rolls_back || !run.server_id) return Promise.resolve(null);
  const serverId = run.server_id as Types.ObjectId;
  return holdOrThaw(run, () => ServerModel.find({ _id: serverId }, { title: 1, tags: 1 }).lean());
}
