import { Types } from 'mongoose';
import { MAX_BATCH_SIZE } from '../../domain/contracts/runs';
import type { Deployment } from '../../domain/deployments/model';
import { ServerModel, type Server } from '../../domain/servers/model';
import { taggedForTargeting } from '../../domain/servers/quarantine';

/*
 * A deployment's targets, resolved when a run is triggered (or planned): the servers it lists and
 * the servers having all its tags (quarantined ones left out), in the order they were added; and its strategy, resolved
 * against how many they are.
 */

export type TargetServer = Pick<Server, '_id' | 'title' | 'host' | 'status' | 'tags'>;

/** The servers a deployment targets now: one for a one-server deployment (none if it was deleted). */
export async function resolveTargets(deployment: Pick<Deployment, 'organization_id' | 'server_id' | 'targets'>): Promise<TargetServer[]> {
  const projection = { title: 1, host: 1, status: 1, tags: 1 };
  const organization_id = deployment.organization_id;
  if (deployment.server_id) return ServerModel.find({ _id: deployment.server_id, organization_id }, projection).lean<TargetServer[]>();
  const ids = (deployment.targets?.server_ids ?? []).map((id) => new Types.ObjectId(String(id)));
  const tags = deployment.targets?.tags ?? [];
  const either = [...(ids.length ? [{ _id: { $in: ids } }] : []), ...(tags.length ? [taggedForTargeting(tags)] : [])];
  if (!either.length) return [];
  // A server listed but deleted since is no longer a target.
  return ServerModel.find({ organization_id, $or: either }, projection).sort({ _id: 1 }).lean<TargetServer[]>();
}

/** The servers of the organization a set of targets (a definition being written) would select now, with their tags. */
export const serversOfDefinition = (organizationId: string, input: { server_id?: string | null; targets?: { server_ids?: string[]; tags?: string[] } | null }) =>
  resolveTargets({ organization_id: organizationId as never, server_id: (input.server_id ?? null) as never, targets: (input.targets ?? null) as never });

/** "25%" of `total`, rounded the way each side means: up for a batch (at least one), down for failures allowed. */
const amount = (value: unknown, total: number, round: (n: number) => number): number | null => {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.endsWith('%')) return round((Number(value.slice(0, -1)) * total) / 100);
  return null;
};

export interface ResolvedStrategy {
  batchSize: number;
  maxFailures: number;
  batches: number;
}

/**
 * `batch_size` (default: all targets, at most MAX_BATCH_SIZE at once) and `max_failures` (default 0)
 * for `total` targets.
 */
export function resolveStrategy(strategy: { batch_size?: unknown; max_failures?: unknown } | null | undefined, total: number): ResolvedStrategy {
  const requested = amount(strategy?.batch_size, total, Math.ceil) ?? total;
  const batchSize = Math.max(1, Math.min(requested, total || 1, MAX_BATCH_SIZE));
  const maxFailures = Math.max(0, amount(strategy?.max_failures, total, Math.floor) ?? 0);
  return { batchSize, maxFailures, batches: Math.ceil(total / batchSize) };
}

/** The batch (1-based) of the target at `index`. */
export const batchOf = (index: number, batchSize: number) => Math.floor(index / batchSize) + 1;
